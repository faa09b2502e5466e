package zkwire_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/zksim/zksim/zkserver"
)

// TestMain stops the shared real ZooKeeper some tests compare with, then
// checks that no goroutine outlives the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	zkserver.StopShared()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
