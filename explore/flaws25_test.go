package explore

import "testing"

// The code of the flaws of issue 25 with its sync is correct: a read after
// a sync sees what the leader had committed when the sync reached it.
func TestStaleReadsWithSync(t *testing.T) {
	for name, m := range map[string]Machine{"elector": staleElectorMachine(true), "worker": staleDoneMachine(true)} {
		t.Run(name, func(t *testing.T) {
			m.Name = "StaleReadsWithSync" + name
			m.Check(t)
		})
	}
}
