package sim_test

import (
	"os"
	"strconv"
	"testing"
)

// TestDumpTrace prints one run's trace (SIM_DUMP=seed).
func TestDumpTrace(t *testing.T) {
	s := os.Getenv("SIM_DUMP")
	if s == "" {
		t.Skip("set SIM_DUMP=<seed> to print a trace")
	}
	seed, _ := strconv.ParseUint(s, 10, 64)
	trace, work := runLockWorld(t, seed, 5)
	t.Logf("acquired %v errs %v resource %+v\n%s", work.acquired, work.errs, work.resource, trace)
}
