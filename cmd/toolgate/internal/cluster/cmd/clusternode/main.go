// Command clusternode is one node of a cluster of package cluster: a Temporal server with every
// service, configured by cluster.NodeConfig from the JSON cluster.NodeSpec in
// $TOOLGATE_CLUSTER_NODE_SPEC. It prints "ready" on stdout once started and runs until SIGINT or
// SIGTERM. The cluster tests run their own test binary as the node instead (one link less).
package main

import (
	"os"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/cluster"
)

func main() {
	os.Exit(cluster.NodeMain())
}
