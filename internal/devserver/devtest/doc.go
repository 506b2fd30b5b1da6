// Package devtest shares one embedded Temporal server among the tests of a package.
//
// # Use
//
//	func TestMain(m *testing.M) {
//		os.Exit(devtest.Main(m, devserver.Options{}))
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
// The server's warnings and errors, and the SDK clients' warnings and errors, go to stderr; go
// test shows them only when the package fails (or with -v).
package devtest
