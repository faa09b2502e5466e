package clients_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/zksim/zksim/zkserver"
)

func TestMain(m *testing.M) {
	code := m.Run()
	zkserver.StopShared()
	removeJavaBuild()
	removeInteropBuild()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
