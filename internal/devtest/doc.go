// Package devtest shares one Temporal server among the tests of a package: a `toolgate dev`
// process (in memory, no Web UI), so test binaries do not link the server and run under the race
// detector (client, worker and tools in the test process, against a real server).
//
// # Use
//
//	func TestMain(m *testing.M) {
//		os.Exit(devtest.Main(m))
//	}
//
//	func TestSomething(t *testing.T) {
//		c := devtest.Client(t)             // dialed to the shared server, closed at cleanup
//		queue := devtest.TaskQueue(t)      // a task queue no other test uses
//		...
//	}
//
// # Isolation
//
// Tests share the server and its namespace, so a test must not depend on what others did: use
// [TaskQueue] for the workers it starts and unique workflow IDs.
//
// # Logs
//
// The SDK clients' warnings and errors go to stderr; go test shows them only when the package
// fails (or with -v). The server's stderr is printed when the package fails.
package devtest
