package sim_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// TestZKWorldTraceDump writes, for seeds 0 to ZKSIM_TRACE_SEEDS-1 (default
// 100), the SHA-256 of the trace of runZKLockWorld (go-zookeeper clients
// taking zk.Lock beside native clients under faults.Mix and a cost model)
// to the file ZKSIM_TRACE_OUT, one line per seed; ZKSIM_TRACE_FULL=1 adds
// each whole trace. Skipped without ZKSIM_TRACE_OUT. Compare the files of
// runs under different -cpu and -race to check that the traces do not
// depend on the Go scheduler:
//
//	for c in 1 2 4; do ZKSIM_TRACE_OUT=/tmp/zkw.$c ZKSIM_TRACE_SEEDS=1000 go test ./sim/ -run '^TestZKWorldTraceDump$' -cpu $c; done
//	ZKSIM_TRACE_OUT=/tmp/zkw.race ZKSIM_TRACE_SEEDS=1000 go test -race ./sim/ -run '^TestZKWorldTraceDump$'
//	md5sum /tmp/zkw.*
func TestZKWorldTraceDump(t *testing.T) {
	out := os.Getenv("ZKSIM_TRACE_OUT")
	if out == "" {
		t.Skip("ZKSIM_TRACE_OUT not set")
	}
	seeds := 100
	if n, err := strconv.Atoi(os.Getenv("ZKSIM_TRACE_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	full := os.Getenv("ZKSIM_TRACE_FULL") != ""
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for seed := range uint64(seeds) {
		trace, _ := runZKLockWorld(t, seed, 3, 2)
		fmt.Fprintf(f, "%d %x\n", seed, sha256.Sum256([]byte(trace)))
		if full {
			fmt.Fprint(f, trace)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
