package explore

import (
	"context"
	"errors"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
)

// foreignGUID is the GUID of the foreign nodes: its names sort after every
// candidate's in each layout (an f, or _c_, against the digits of a
// sequence), so that an order that took one in would not put it first.
const foreignGUID = "ffffffff-ffff-4fff-bfff-ffffffffffff"

// foreignNames are, for each layout, contender nodes of another library's
// layout that it cannot order (election.WithLayout's doc): for zksim's,
// kazoo's nodes and Curator's lock-, latch-, __READ__ and __WRIT__ ones;
// for kazoo's, any _c_<guid>- node. None for the Curator layouts: every
// child of the directory takes part in their order, so Leader and Observe
// would report a lone foreign node as the leader, as Curator's would.
func (a *electionAPI) foreignNames() []string {
	protected := func(name string) string { return "_c_" + foreignGUID + "-" + name + "0000000099" }
	switch a.layout {
	case election.Zksim:
		return []string{"ffffffffffffffffffffffffffffffff__lock__0000000099",
			protected("lock-"), protected("latch-"), protected("__READ__"), protected("__WRIT__")}
	case election.Kazoo:
		return []string{protected("n_"), protected("latch-")}
	}
	return nil
}

// foreignNode (the action Foreign, the Election on one server, in zksim's
// or kazoo's layout): a third party creates in the directory a contender
// node of a layout the drawn one cannot order, and a Campaign begins: it must return an error
// matching recipes.ErrForeignNodes, having deleted the node it made (on
// a session of its own, which the orphan check does not see: the
// directory's check below does). The foreign node goes once that
// Campaign has returned (check), so the election goes on; meanwhile a
// candidate that lists the directory may refuse it too (judgeResults).
func (a *electionAPI) foreignNode(t *rapid.T) {
	w := a.w
	names := a.foreignNames()
	if a.foreign != "" || len(names) == 0 {
		t.SkipNow()
	}
	c := drawClient(t, a.free("foreign"), "foreign")
	name := rapid.SampledFrom(names).Draw(t, "foreign node")
	_, _ = w.observer.Create(w.ctx, electionDir, nil, zksim.ModePersistent, zksim.OpenACL())
	p := electionDir + "/" + name
	if _, err := w.observer.Create(w.ctx, p, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
	w.trace("a third party creates %s, which the %v layout cannot order", p, a.layout)
	a.foreign, a.foreignEver = p, true
	conn := a.apiConn(t, "foreign")
	e := a.direct(c, conn, "Campaign beside a foreign node")
	startNow(c, "foreign", func(ctx context.Context) error {
		err := e.Campaign(ctx, []byte("foreign"))
		var left []string
		if err != nil {
			left = a.w.ownedUnder(electionDir, conn.SessionID())
		}
		a.report(apiResult{c: c, what: "Campaign beside a foreign node", err: err, left: left})
		return err
	})
}

// endForeign deletes the foreign node once the Campaign begun beside it
// has returned (check calls it after every step).
func (a *electionAPI) endForeign() {
	if a.foreign == "" || a.foreignBusy() {
		return
	}
	w := a.w
	if err := w.observer.Delete(w.ctx, a.foreign, -1); err != nil && !errors.Is(err, zksim.ErrNoNode) {
		panic("delete " + a.foreign + ": " + err.Error()) // the observer is never cut off
	}
	w.trace("a third party deletes %s", a.foreign)
	a.foreign = ""
}

// foreignBusy reports whether a Campaign begun beside a foreign node is
// under way.
func (a *electionAPI) foreignBusy() bool {
	for _, c := range a.w.clients {
		if c.busy("foreign") {
			return true
		}
	}
	return false
}

// judgeForeign judges the result of a Campaign begun beside a foreign
// node, "" if it is right.
func judgeForeign(r apiResult) string {
	switch {
	case r.err == nil:
		return "it leads beside a node of a layout it cannot order: want recipes.ErrForeignNodes"
	case errors.Is(r.err, recipes.ErrForeignNodes):
		if len(r.left) > 0 {
			return "it left its node " + r.left[0]
		}
		return ""
	case failedOK(r.err):
		return ""
	}
	return "not recipes.ErrForeignNodes"
}
