package explore

import (
	"crypto/rand"
	"encoding/binary"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim/harness"
)

// randomBase returns a fresh non-zero seed.
func randomBase() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return max(binary.LittleEndian.Uint64(b[:])>>1, 1)
}

// maxShrunk is the longest shrunk schedule TestFlawsOnRandomSeeds
// accepts.
const maxShrunk = 15

// TestFlawsOnRandomSeeds checks that each flaw (ZKSIM_FLAW_ONLY: the one
// named) is caught at the CI budget (1,000 checks, the flawed-recipe
// settings of Flaw.Catch but the seed) on every one of N random seeds, N
// from ZKSIM_FLAW_SEEDS (skipped without it; the base seed from
// ZKSIM_FLAW_BASE, else random and logged), and shrunk to at most
// maxShrunk actions. It logs, for each flaw and seed, the check that
// caught it and the length of the shrunk schedule, and how long the
// slowest seed took.
//
//	ZKSIM_FLAW_SEEDS=20 go test ./explore/ -run TestFlawsOnRandomSeeds -v -timeout 120m
func TestFlawsOnRandomSeeds(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ZKSIM_FLAW_SEEDS"))
	if n <= 0 {
		t.Skip("set ZKSIM_FLAW_SEEDS=N to run")
	}
	base := randomBase()
	if v, err := strconv.ParseUint(os.Getenv("ZKSIM_FLAW_BASE"), 10, 64); err == nil {
		base = v
	}
	only := os.Getenv("ZKSIM_FLAW_ONLY")
	t.Logf("base seed %d (ZKSIM_FLAW_BASE), %d seeds, 1000 checks each", base, n)
	defer setFlawFlags(t)()
	for _, f := range Flaws {
		if only != "" && f.Name != only {
			continue
		}
		var (
			caught, longest int
			runs            []string
			slowest         time.Duration
		)
		for i := range n {
			seed := base + uint64(i)*0x9e3779b97f4a7c15
			seed = max(seed>>1, 1)
			t.Logf("%s: seed %d", f.Name, seed)
			start := time.Now()
			c := harness.Catch(t, f.Machine.harness(), harness.CatchOptions{Checks: 1000, Seed: seed}, f.wants()...)
			d := time.Since(start)
			slowest = max(slowest, d)
			m := failedAfter.FindStringSubmatch(c.Report)
			switch {
			case !c.Caught:
				runs = append(runs, "MISSED")
			case !c.AsWanted:
				runs = append(runs, "OTHER")
				t.Errorf("%s, seed %d: caught, but not as %q: %s", f.Name, seed, f.Want, c.Report)
			default:
				caught++
				longest = max(longest, len(c.Schedule))
				k, _ := strconv.Atoi(m[1])
				runs = append(runs, strconv.Itoa(k+1)+"/"+strconv.Itoa(len(c.Schedule)))
				if len(c.Schedule) > maxShrunk {
					t.Errorf("%s, seed %d: shrunk to %d actions, more than %d: %s", f.Name, seed, len(c.Schedule), maxShrunk, strings.Join(c.Schedule, ", "))
				}
			}
		}
		t.Logf("%-32s caught on %d/%d seeds (check #/shrunk actions: %s); longest %d actions; slowest %v", f.Name, caught, n, strings.Join(runs, " "), longest, slowest.Round(time.Millisecond))
		if caught < n {
			t.Errorf("%s caught on %d of %d seeds only", f.Name, caught, n)
		}
	}
}

var failedAfter = regexp.MustCompile(`failed after (\d+) tests`)
