package zkserver

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
)

// shared is the one server a test binary shares between its tests.
var shared struct {
	once sync.Once
	srv  *Server
	dir  string
	err  error
}

// Shared returns the server shared by every test of the test binary,
// starting it on the first call (a few seconds; later calls return at
// once). It skips or fails the test as Start does when no server can be
// had; once a start has failed, every later call reports the same error
// without trying again.
//
// The server outlives the test that started it. Stop it from TestMain:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		zkserver.StopShared()
//		os.Exit(code)
//	}
//
// Without that, the server dies with the test binary (on Linux the kernel
// kills it when the binary exits) but its temporary directory stays behind.
//
// Tests that share the server must not step on each other: give each its
// own root path (see [Server.Root]) and never touch other roots.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(startShared)
	if shared.err != nil {
		unavailable(t, shared.err)
		return nil
	}
	t.Cleanup(func() {
		if t.Failed() {
			kept := keepLog(shared.srv.logPath, t.Name())
			t.Logf("zkserver: the shared server at %s has logged so far to %s; last lines:\n%s", shared.srv.addr, kept, shared.srv.LogTail(20))
		}
	})
	return shared.srv
}

func startShared() {
	inst, err := findInstallation()
	if err != nil {
		shared.err = err
		return
	}
	dir, err := os.MkdirTemp("", "zkserver-shared-")
	if err != nil {
		shared.err = err
		return
	}
	shared.dir = dir
	shared.srv, shared.err = launch(inst, dir, defaultConfig())
}

// StopShared stops the shared server, if one was started, and removes its
// directory. Call it from TestMain after m.Run. Calling Shared afterwards is
// a mistake: it returns the stopped server.
func StopShared() {
	if shared.srv != nil {
		shared.srv.Stop()
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
}

var rootCounter atomic.Int64

var unsafePathChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Root returns a fresh top-level path for t, such as "/TestLock-Basic-7",
// unique within the test binary. It does not create the node. Tests that
// share a server each work under their own root.
func (s *Server) Root(t testing.TB) string {
	name := unsafePathChars.ReplaceAllString(filepath.ToSlash(t.Name()), "-")
	if len(name) > 80 {
		name = name[:80]
	}
	return fmt.Sprintf("/%s-%d", name, rootCounter.Add(1))
}
