package conformance

import (
	"bytes"
	"fmt"

	"github.com/zksim/zksim"
)

// Data is null or bytes. A jute buffer is null (length -1) or holds
// length ≥ 0 bytes, and the server keeps the two apart (checked on 3.8.0
// with raw frames): a node created or set with nil data reads back nil,
// one given empty data reads back empty, non-nil; the nodes of a fresh
// server read back empty. Stat.DataLength is 0 for both. go-zookeeper
// sends nil as -1 and empty as 0 and reads them back the same way, so the
// difference reaches a gozk caller.
func dataCases() []testCase {
	return []testCase{
		{"nil-and-empty-data-kept-apart", func(e *env) {
			e.create(e.c, e.p("nil"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("empty"), []byte{}, zksim.ModePersistent)
			e.requireData(e.p("nil"), nil)
			e.requireData(e.p("empty"), []byte{})
		}},
		{"ephemeral-and-sequential-keep-empty", func(e *env) {
			eph := e.create(e.c, e.p("e"), []byte{}, zksim.ModeEphemeral)
			seq := e.create(e.c, e.p("s-"), []byte{}, zksim.ModePersistentSequential)
			e.requireData(eph, []byte{})
			e.requireData(seq, []byte{})
		}},
		{"set-empty-then-nil", func(e *env) {
			e.create(e.c, e.p("a"), []byte("x"), zksim.ModePersistent)
			e.set(e.c, e.p("a"), []byte{})
			e.requireData(e.p("a"), []byte{})
			e.set(e.c, e.p("a"), nil)
			e.requireData(e.p("a"), nil)
			e.set(e.c, e.p("a"), []byte{})
			e.requireData(e.p("a"), []byte{})
		}},
		{"getw-reads-empty", func(e *env) {
			e.create(e.c, e.p("a"), []byte{}, zksim.ModePersistent)
			got, _, _, err := e.c.GetW(e.ctx, e.p("a"))
			e.requireNoError(err, "getW")
			e.sameData(got, []byte{}, "getW "+e.p("a"))
		}},
		{"multi-keeps-nil-and-empty", func(e *env) {
			e.create(e.c, e.p("set-nil"), []byte("x"), zksim.ModePersistent)
			e.create(e.c, e.p("set-empty"), []byte("x"), zksim.ModePersistent)
			_, err := e.c.Multi(e.ctx,
				&zksim.CreateOp{Path: e.p("nil"), Data: nil, Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
				&zksim.CreateOp{Path: e.p("empty"), Data: []byte{}, Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
				&zksim.SetOp{Path: e.p("set-nil"), Data: nil, Version: -1},
				&zksim.SetOp{Path: e.p("set-empty"), Data: []byte{}, Version: -1},
			)
			e.requireNoError(err, "multi")
			e.requireData(e.p("nil"), nil)
			e.requireData(e.p("empty"), []byte{})
			e.requireData(e.p("set-nil"), nil)
			e.requireData(e.p("set-empty"), []byte{})
		}},
		{"failed-multi-leaves-nil-and-empty", func(e *env) {
			e.create(e.c, e.p("nil"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("empty"), []byte{}, zksim.ModePersistent)
			_, err := e.c.Multi(e.ctx,
				&zksim.SetOp{Path: e.p("nil"), Data: []byte{}, Version: -1},
				&zksim.SetOp{Path: e.p("empty"), Data: nil, Version: -1},
				&zksim.CheckOp{Path: e.p("missing"), Version: -1},
			)
			e.is(err, zksim.ErrNoNode, "multi failing on its check")
			e.requireData(e.p("nil"), nil)
			e.requireData(e.p("empty"), []byte{})
		}},
		{"system-nodes-read-empty", func(e *env) {
			for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
				e.requireData(p, []byte{})
			}
		}},
	}
}

// requireData checks that path holds exactly want: nil when want is nil,
// non-nil and equal bytes otherwise, and a DataLength of len(want).
func (e *env) requireData(p string, want []byte) {
	e.t.Helper()
	got, st, err := e.c.Get(e.ctx, p)
	e.requireNoError(err, "get "+p)
	e.sameData(got, want, "get "+p)
	if st == nil || st.DataLength != int32(len(want)) {
		e.t.Fatalf("get %s: Stat %+v, want DataLength %d", p, st, len(want))
	}
}

// sameData fails the case unless got is exactly want, nil apart from
// empty (require.Equal and require.Empty cannot tell them apart).
func (e *env) sameData(got, want []byte, what string) {
	e.t.Helper()
	if (got == nil) != (want == nil) || !bytes.Equal(got, want) {
		e.t.Fatalf("%s: data %s, want %s", what, showData(got), showData(want))
	}
}

func (e *env) requireNoError(err error, what string) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// showData prints data with nil apart from empty.
func showData(b []byte) string {
	switch {
	case b == nil:
		return "nil (null, length -1)"
	case len(b) == 0:
		return "[]byte{} (empty, length 0)"
	}
	return fmt.Sprintf("%q", b)
}
