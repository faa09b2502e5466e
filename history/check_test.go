package history_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/history"
)

// hist builds a history by hand. Ticks are given explicitly: an op
// invoked at tick a and returned at tick b gets times 2a+1 and 2b, as the
// Recorder gives them.
type hist struct{ ops []history.Op }

func (h *hist) add(client int, kind history.Kind, path string, data string, version int32, call, ret int64, res history.Result) *hist {
	op := history.Op{ID: len(h.ops), Client: client, Kind: kind, Path: path, Version: version, Result: res, Invoked: 2*call + 1, Returned: 2 * ret}
	if data != "" {
		op.Data = []byte(data)
	}
	if ret < 0 {
		op.Returned = history.Pending
	}
	h.ops = append(h.ops, op)
	return h
}

func stat(czxid, mzxid int64, version int32) *zksim.Stat {
	return &zksim.Stat{Czxid: czxid, Mzxid: mzxid, Pzxid: czxid, Version: version}
}

func got(data string, st *zksim.Stat) history.Result {
	return history.Result{Data: []byte(data), Stat: st}
}

func fail(err error) history.Result { return history.Result{Err: err} }

// requireViolation checks that Check finds a violation of rule and of no
// other rule but those in also, and returns the message.
func requireViolation(t *testing.T, ops []history.Op, rule history.Rule, also ...history.Rule) string {
	t.Helper()
	err := history.Check(ops)
	var herr *history.Error
	require.True(t, errors.As(err, &herr), "Check returned %v, want a *history.Error", err)
	require.True(t, herr.Has(rule), "no violation of %q in %v", rule, err)
	for _, v := range herr.Violations {
		require.True(t, v.Rule == rule || slices.Contains(also, v.Rule), "violation: %s", v)
	}
	t.Log(err)
	return err.Error()
}

// base is a correct history: c0 creates /k and sets it twice; c1 reads
// each state in order.
func base() *hist {
	h := &hist{}
	h.add(0, history.Create, "/k", "a", 0, 1, 2, history.Result{})
	h.add(1, history.Get, "/k", "", 0, 3, 4, got("a", stat(10, 10, 0)))
	h.add(0, history.Set, "/k", "b", 0, 5, 6, history.Result{Stat: stat(10, 12, 1)})
	h.add(1, history.Get, "/k", "", 0, 7, 8, got("b", stat(10, 12, 1)))
	h.add(0, history.Set, "/k", "c", -1, 9, 10, history.Result{Stat: stat(10, 14, 2)})
	return h
}

func TestCheckAcceptsCorrectHistories(t *testing.T) {
	require.NoError(t, history.Check(base().ops))

	// A lagging read is allowed if it does not go back: c1 reads a, then
	// (stale, after c0's set returned) a again, then b.
	h := &hist{}
	h.add(0, history.Create, "/k", "a", 0, 1, 2, history.Result{})
	h.add(0, history.Set, "/k", "b", 0, 3, 4, history.Result{Stat: stat(10, 12, 1)})
	h.add(1, history.Get, "/k", "", 0, 5, 6, got("a", stat(10, 10, 0)))
	h.add(1, history.Get, "/k", "", 0, 7, 8, got("a", stat(10, 10, 0)))
	h.add(1, history.Get, "/k", "", 0, 9, 10, got("b", stat(10, 12, 1)))
	h.add(1, history.Exists, "/k", "", 0, 11, 12, history.Result{Exists: true, Stat: stat(10, 12, 1)})
	require.NoError(t, history.Check(h.ops))

	// A write whose outcome is unknown may have happened (a read shows it)
	// or not.
	h = &hist{}
	h.add(0, history.Create, "/k", "a", 0, 1, 2, history.Result{})
	h.add(0, history.Set, "/k", "b", -1, 3, 4, fail(zksim.ErrConnectionLoss))
	h.add(1, history.Get, "/k", "", 0, 5, 6, got("b", stat(10, 11, 1)))
	h.add(0, history.Set, "/k", "c", 1, 7, 8, history.Result{Stat: stat(10, 13, 2)})
	h.add(0, history.Delete, "/j", "", -1, 9, -1, history.Result{})
	require.NoError(t, history.Check(h.ops))

	// A write whose call gave up may still take effect later: here after
	// a set invoked once the call had given up (zxid 0x14 above 0xf).
	h = &hist{}
	h.add(0, history.Create, "/k", "a", 0, 1, 2, history.Result{})
	h.add(1, history.Create, "/a", "x", 0, 1, 2, history.Result{})
	h.add(0, history.Set, "/k", "b", -1, 3, 4, fail(context.DeadlineExceeded))
	h.add(1, history.Set, "/a", "y", -1, 5, 6, history.Result{Stat: stat(11, 15, 1)})
	h.add(2, history.Get, "/k", "", 0, 7, 8, got("b", stat(10, 20, 1)))
	require.NoError(t, history.Check(h.ops))
}

func TestCheckStaleReadGoingBackwards(t *testing.T) {
	h := base()
	// c1 has read b (version 1); now it reads a again.
	h.add(1, history.Get, "/k", "", 0, 11, 12, got("a", stat(10, 10, 0)))
	msg := requireViolation(t, h.ops, history.Monotonic)
	require.Contains(t, msg, "client 1: read /k at version 0")
	require.Contains(t, msg, "goes back in time")
}

func TestCheckStaleReadAcrossPaths(t *testing.T) {
	h := &hist{}
	h.add(0, history.Create, "/a", "a0", 0, 1, 2, history.Result{})
	h.add(0, history.Set, "/a", "a1", -1, 3, 4, history.Result{Stat: stat(10, 12, 1)})
	h.add(0, history.Create, "/b", "b0", 0, 5, 6, history.Result{})
	// c1 sees /b (created after /a's set, czxid 13), then /a's old version.
	h.add(1, history.Get, "/b", "", 0, 7, 8, got("b0", stat(13, 13, 0)))
	h.add(1, history.Get, "/a", "", 0, 9, 10, got("a0", stat(10, 10, 0)))
	msg := requireViolation(t, h.ops, history.Monotonic)
	require.Contains(t, msg, "after the client had seen zxid 0xd")
}

func TestCheckLostAcknowledgedWrite(t *testing.T) {
	// c0's create of /k was acknowledged; c1's create, invoked later,
	// succeeds too: the first was lost.
	h := &hist{}
	h.add(0, history.Create, "/k", "a", 0, 1, 2, history.Result{})
	h.add(1, history.Create, "/k", "b", 0, 3, 4, history.Result{})
	msg := requireViolation(t, h.ops, history.Linearizable)
	require.Contains(t, msg, "no order of the 2 writes on /k")

	// An acknowledged set is lost: a later conditional set on the version
	// it made fails.
	h = &hist{}
	h.add(0, history.Create, "/k", "a", 0, 1, 2, history.Result{})
	h.add(0, history.Set, "/k", "b", 0, 3, 4, history.Result{Stat: stat(10, 12, 1)})
	h.add(1, history.Set, "/k", "c", 1, 5, 6, fail(zksim.ErrBadVersion))
	requireViolation(t, h.ops, history.Linearizable)
}

func TestCheckReadMissingOwnWrite(t *testing.T) {
	h := base()
	// c0 set c (version 2, mzxid 14) and then reads version 1.
	h.add(0, history.Get, "/k", "", 0, 11, 12, got("b", stat(10, 12, 1)))
	msg := requireViolation(t, h.ops, history.ReadYourWrites)
	require.Contains(t, msg, "client 0: read /k at version 1")

	// c0 created /j and then finds it missing; no one deleted it.
	h = &hist{}
	h.add(0, history.Create, "/j", "x", 0, 1, 2, history.Result{})
	h.add(0, history.Get, "/j", "", 0, 3, 4, fail(zksim.ErrNoNode))
	msg = requireViolation(t, h.ops, history.ReadYourWrites)
	require.Contains(t, msg, "found /j missing")

	// c0 deleted /j and then reads it.
	h = &hist{}
	h.add(0, history.Create, "/j", "x", 0, 1, 2, history.Result{})
	h.add(1, history.Get, "/j", "", 0, 3, 4, got("x", stat(20, 20, 0)))
	h.add(0, history.Delete, "/j", "", -1, 5, 6, history.Result{})
	h.add(0, history.Exists, "/j", "", 0, 7, 8, history.Result{Exists: true, Stat: stat(20, 20, 0)})
	requireViolation(t, h.ops, history.ReadYourWrites)
}

func TestCheckSyncThenRead(t *testing.T) {
	h := base()
	// c1 syncs after c0's last set returned, then reads version 1.
	h.add(1, history.Sync, "/k", "", 0, 11, 12, history.Result{})
	h.add(1, history.Get, "/k", "", 0, 13, 14, got("b", stat(10, 12, 1)))
	requireViolation(t, h.ops, history.SyncRead)

	// c1 syncs after c0's create of /j returned and finds /j missing.
	h = base()
	h.add(0, history.Create, "/j", "x", 0, 11, 12, history.Result{})
	h.add(1, history.Sync, "/j", "", 0, 13, 14, history.Result{})
	h.add(1, history.Exists, "/j", "", 0, 15, 16, history.Result{})
	requireViolation(t, h.ops, history.SyncRead)
}

func TestCheckNonLinearizableWrites(t *testing.T) {
	// c1's set returns version 1 after c0's set of version 1 had returned.
	h := &hist{}
	h.add(0, history.Create, "/k", "a", 0, 1, 2, history.Result{})
	h.add(0, history.Set, "/k", "b", -1, 3, 4, history.Result{Stat: stat(10, 12, 1)})
	h.add(1, history.Set, "/k", "c", -1, 5, 6, history.Result{Stat: stat(10, 13, 1)})
	requireViolation(t, h.ops, history.Linearizable, history.ValueWritten)

	// zxids against real time, across paths: a write invoked after another
	// returned has a lower zxid.
	h = &hist{}
	h.add(0, history.Create, "/a", "a", 0, 1, 2, history.Result{})
	h.add(0, history.Create, "/b", "b", 0, 1, 2, history.Result{})
	h.add(0, history.Set, "/a", "a1", -1, 3, 4, history.Result{Stat: stat(10, 20, 1)})
	h.add(1, history.Set, "/b", "b1", -1, 5, 6, history.Result{Stat: stat(11, 15, 1)})
	msg := requireViolation(t, h.ops, history.Linearizable)
	require.Contains(t, msg, "a write has zxid 0xf")
}

func TestCheckReadOfUnwrittenData(t *testing.T) {
	h := base()
	h.add(1, history.Get, "/k", "", 0, 11, 12, got("zzz", stat(10, 16, 3)))
	requireViolation(t, h.ops, history.ValueWritten)

	h = base()
	h.add(1, history.Set, "/k", "d", 7, 11, 12, fail(zksim.ErrBadVersion))
	h.add(1, history.Get, "/k", "", 0, 13, 14, got("d", stat(10, 16, 3)))
	requireViolation(t, h.ops, history.ValueWritten)
}

func TestCheckRefusesUnsupportedOps(t *testing.T) {
	h := base()
	h.ops = append(h.ops, history.Op{ID: 5, Kind: history.Unsupported, Path: "/k", What: "multi of 2 ops", Invoked: 31, Returned: 32})
	err := history.Check(h.ops)
	require.Error(t, err)
	var herr *history.Error
	require.False(t, errors.As(err, &herr))
	require.True(t, strings.Contains(err.Error(), "no model"), err.Error())
}

func TestCheckNewSessionStartsAfresh(t *testing.T) {
	h := base()
	h.add(1, history.Get, "/k", "", 0, 11, 12, got("a", stat(10, 10, 0)))
	for i := range h.ops {
		if h.ops[i].Client == 1 {
			h.ops[i].Session = 0x100
		}
	}
	requireViolation(t, h.ops, history.Monotonic)
	// The same read on a new session of client 1 may be that old.
	h.ops[len(h.ops)-1].Session = 0x200
	require.NoError(t, history.Check(h.ops))
}

func TestCheckReadFromTheFuture(t *testing.T) {
	// c1 reads b before c0 even sent the set that writes it.
	h := &hist{}
	h.add(0, history.Create, "/k", "a", 0, 1, 2, history.Result{})
	h.add(1, history.Get, "/k", "", 0, 3, 4, got("b", stat(10, 12, 1)))
	h.add(0, history.Set, "/k", "b", -1, 5, 6, history.Result{Stat: stat(10, 12, 1)})
	msg := requireViolation(t, h.ops, history.Linearizable)
	require.Contains(t, msg, "a read cannot see a later write")
}

func TestVisualizeWrites(t *testing.T) {
	h := &hist{}
	h.add(0, history.Create, "/k", "a", 0, 1, 2, history.Result{})
	h.add(1, history.Create, "/k", "b", 0, 3, 4, history.Result{})
	var b strings.Builder
	require.NoError(t, history.VisualizeWrites(h.ops, &b))
	require.Contains(t, b.String(), "<html")
	require.Contains(t, b.String(), `create /k \"b\"`)
}

func TestCheckChildrenAfterOwnDelete(t *testing.T) {
	h := &hist{}
	h.add(0, history.Create, "/d/j", "x", 0, 1, 2, history.Result{})
	h.add(0, history.Delete, "/d/j", "", -1, 3, 4, history.Result{})
	h.add(0, history.Children, "/d", "", 0, 5, 6, history.Result{Children: []string{"j"}, Stat: stat(1, 1, 0)})
	msg := requireViolation(t, h.ops, history.ReadYourWrites)
	require.Contains(t, msg, "listed /d/j after it was deleted")

	// Another client's create, concurrent with the list, may have come
	// in between.
	h.add(1, history.Create, "/d/j", "y", 0, 5, 7, history.Result{})
	require.NoError(t, history.Check(h.ops))
}

func TestCheckEndedSession(t *testing.T) {
	// The first call to learn that the session expired may have been
	// applied; a call made after that was not.
	h := &hist{}
	h.add(0, history.Create, "/k", "a", 0, 1, 2, history.Result{})
	h.add(0, history.Set, "/k", "b", -1, 3, 4, fail(zksim.ErrSessionExpired))
	h.add(1, history.Get, "/k", "", 0, 5, 6, got("b", stat(10, 11, 1)))
	require.NoError(t, history.Check(h.ops))
	h.add(0, history.Set, "/k", "c", -1, 7, 8, fail(zksim.ErrSessionExpired))
	h.add(1, history.Get, "/k", "", 0, 9, 10, got("c", stat(10, 12, 2)))
	msg := requireViolation(t, h.ops, history.ValueWritten)
	require.Contains(t, msg, "only a failed write wrote")
}

func TestCheckUnknownWriteAppliedAfterNextWrite(t *testing.T) {
	// c0's set of b lost its connection; its next sets, of c and d, made
	// versions 1 and 2. b cannot have been applied after them (a client's
	// writes apply in the order sent: b came before c returned), yet c1
	// reads b at version 3.
	h := &hist{}
	h.add(0, history.Create, "/k", "a", 0, 1, 2, history.Result{})
	h.add(0, history.Set, "/k", "b", -1, 3, 4, fail(zksim.ErrConnectionLoss))
	h.add(0, history.Set, "/k", "c", -1, 5, 6, history.Result{Stat: stat(10, 12, 1)})
	h.add(0, history.Set, "/k", "d", -1, 7, 8, history.Result{Stat: stat(10, 13, 2)})
	h.add(1, history.Get, "/k", "", 0, 9, 10, got("b", stat(10, 14, 3)))
	requireViolation(t, h.ops, history.Linearizable)
	// Had c0 sent c and d on a new session, b could have come last.
	h.ops[1].Session, h.ops[2].Session, h.ops[3].Session = 1, 2, 2
	require.NoError(t, history.Check(h.ops))
}
