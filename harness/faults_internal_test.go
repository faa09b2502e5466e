package harness

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/faults"
)

// The constants of Fault name the rows of the catalogue that machines
// draw, bit i for the i-th, and AllFaults is all of them.
func TestFaultConstantsNameTheCatalogue(t *testing.T) {
	names := map[Fault]string{
		LoseReply: "LoseReply", DropRequest: "DropRequest", Shuffle: "Shuffle",
		Partition: "Partition", Expire: "Expire", Pause: "Pause", Delay: "Delay",
		Slow: "Slow", FailAuth: "FailAuth",
		Lag: "Lag", Crash: "Crash", Isolate: "Isolate", FailLeader: "FailLeader",
	}
	var all Fault
	for i, r := range faultTable {
		if r.fault != 1<<i {
			t.Errorf("row %d (%s) has bit %#x", i, r.Explore.Name, uint32(r.fault))
		}
		if names[r.fault] != r.Explore.Name {
			t.Errorf("bit %#x is the constant %q, the catalogue's row %q: add the constant, in the catalogue's order", uint32(r.fault), names[r.fault], r.Explore.Name)
		}
		all |= r.fault
	}
	if len(faultTable) != len(names) || all != AllFaults {
		t.Errorf("the catalogue has %d faults for machines (%v), the constants %d (AllFaults %v)", len(faultTable), all, len(names), AllFaults)
	}
	if got := nativeOnly(); got != FailAuth {
		t.Errorf("native-only faults: %v, want FailAuth", got)
	}
	if got := ensembleOnly(); got != Lag|Crash|Isolate|FailLeader {
		t.Errorf("ensemble faults: %v, want Lag|Crash|Isolate|FailLeader", got)
	}
	var fates []string
	for _, r := range fateRows {
		fates = append(fates, r.Name)
	}
	require.Equal(t, []string{"LoseReply", "DropRequest", "ShuffleChildren"}, fates, "a Step action's fates")
	for _, r := range faultTable {
		if r.Step != (r.Explore.Make != nil) {
			t.Errorf("%s: a step fault must have an action, a request fault none", r.Name)
		}
		if r.Explore.End.Name != "" && r.Explore.Who != faults.Connected && r.Explore.Who != faults.Awake && !r.Explore.Who.Members() {
			t.Errorf("%s: a fault with an end strikes %v", r.Name, r.Explore.Who)
		}
	}
}
