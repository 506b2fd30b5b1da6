// Package deploy holds no code: its tests check the deployment files at the repository root
// (docker-compose.yml, Dockerfile) by inspection, since no Docker engine runs where CI does.
//
// # What is checked
//
// The compose file names its services (PostgreSQL, the Temporal schema job, Temporal, the
// namespace job, the Web UI, a toolgate worker), pins every image, wires depends_on to existing
// services without cycles, publishes ports on loopback only, and points the worker at the
// Temporal service. The Dockerfile pins its base images and builds with the Go version go.mod
// declares.
package deploy
