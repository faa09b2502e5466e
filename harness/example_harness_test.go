package harness_test

import (
	"context"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/harness"
)

// electionMachine explores Elector on go-zookeeper clients, with the
// planted bug or without.
func electionMachine(blind bool) harness.Machine[*Elector] {
	return harness.Machine[*Elector]{
		Name:   "elector",
		Client: harness.GoZK,
		Setup: func(ctx context.Context, c zksim.Conn) error {
			_, err := c.Create(ctx, "/election", nil, zksim.ModePersistent, zksim.OpenACL())
			return err
		},
		New: func(p *harness.Process[*Elector]) *Elector {
			return &Elector{Conn: p.ZK(), Dir: "/election", Blind: blind}
		},
		Ops: map[string]func(*rapid.T, *harness.Process[*Elector]){
			"Campaign": func(t *rapid.T, p *harness.Process[*Elector]) {
				if !p.Go("campaign", p.Obj().Campaign) {
					t.SkipNow()
				}
			},
			"Resign": func(t *rapid.T, p *harness.Process[*Elector]) {
				if !p.Busy("campaign") {
					t.SkipNow()
				}
				p.Cancel("campaign")
			},
		},
		Invariants: []harness.Invariant[*Elector]{{
			Name: "two leaders",
			Check: func(w *harness.World[*Elector]) error {
				var leaders []int
				for _, p := range w.Processes() {
					if p.Obj().Leading() && p.SessionLive() {
						leaders = append(leaders, p.Index())
					}
				}
				if len(leaders) > 1 {
					return fmt.Errorf("processes %v lead on live sessions", leaders)
				}
				return nil
			},
		}},
		// Once faults stop, every process campaigns, and one leads.
		Liveness: func(p *harness.Process[*Elector]) { p.Go("campaign", p.Obj().Campaign) },
		Eventually: []harness.Invariant[*Elector]{{
			Name: "a leader",
			Check: func(w *harness.World[*Elector]) error {
				for _, p := range w.Processes() {
					if p.Obj().Leading() && p.SessionLive() {
						return nil
					}
				}
				return fmt.Errorf("no process leads")
			},
		}},
	}
}

func TestElectorExplored(t *testing.T) {
	harness.Check(t, electionMachine(false))
}

func TestBlindElectorIsCaught(t *testing.T) {
	harness.ExpectCaught(t, electionMachine(true), "two leaders")
}
