package conformance

import (
	"math"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// Sequence numbers: "%010d" of the parent's internal cversion, which counts
// child creates of any mode and is not bumped by deletes.
func sequenceCases() []testCase {
	return []testCase{
		{"first-is-zero", func(e *env) {
			require.Equal(e.t, e.p("s-0000000000"), e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential))
		}},
		{"consecutive", func(e *env) {
			for i := int32(0); i < 12; i++ {
				got := e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential)
				require.Equal(e.t, e.p(seqName("s-", i)), got)
			}
		}},
		{"ten-digits-zero-padded", func(e *env) {
			for i := 0; i < 10; i++ {
				e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential)
			}
			require.Equal(e.t, e.p("s-0000000010"), e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential))
		}},
		{"counts-plain-creates", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("b"), nil, zksim.ModePersistent)
			require.Equal(e.t, e.p("s-0000000002"), e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential))
		}},
		{"counts-every-mode", func(e *env) {
			e.create(e.c, e.p("p"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("e"), nil, zksim.ModeEphemeral)
			e.create(e.c, e.p("c"), nil, zksim.ModeContainer)
			e.create(e.c, e.p("es-"), nil, zksim.ModeEphemeralSequential)
			next := int32(4)
			if e.facts().ExtendedTypes {
				_, err := e.c.CreateTTL(e.ctx, e.p("t"), nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), time.Hour)
				require.NoError(e.t, err)
				next++
			}
			require.Equal(e.t, e.p(seqName("s-", next)), e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential))
		}},
		{"deletes-do-not-bump", func(e *env) {
			// Checked on a real server: create /t/a, delete it, and the
			// next sequential child is ...0000000001.
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("a"), -1))
			require.Equal(e.t, e.p("s-0000000001"), e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential))
		}},
		{"deleting-sequential-children-keeps-counting", func(e *env) {
			for i := int32(0); i < 3; i++ {
				got := e.create(e.c, e.p("s-"), nil, zksim.ModeEphemeralSequential)
				require.Equal(e.t, e.p(seqName("s-", i)), got)
				require.NoError(e.t, e.c.Delete(e.ctx, got, -1))
			}
			require.Equal(e.t, e.p("s-0000000003"), e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential))
		}},
		{"ephemeral-children-removed-at-close-do-not-bump", func(e *env) {
			c2 := e.connect()
			e.create(c2, e.p("e-"), nil, zksim.ModeEphemeralSequential)
			e.create(c2, e.p("e-"), nil, zksim.ModeEphemeralSequential)
			require.NoError(e.t, c2.Close())
			require.Equal(e.t, e.p("s-0000000002"), e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential))
		}},
		{"shared-across-prefixes", func(e *env) {
			require.Equal(e.t, e.p("a-0000000000"), e.create(e.c, e.p("a-"), nil, zksim.ModePersistentSequential))
			require.Equal(e.t, e.p("b-0000000001"), e.create(e.c, e.p("b-"), nil, zksim.ModeEphemeralSequential))
			require.Equal(e.t, e.p("a-0000000002"), e.create(e.c, e.p("a-"), nil, zksim.ModeEphemeralSequential))
		}},
		{"shared-across-sessions", func(e *env) {
			c2 := e.connect()
			require.Equal(e.t, e.p("s-0000000000"), e.create(e.c, e.p("s-"), nil, zksim.ModeEphemeralSequential))
			require.Equal(e.t, e.p("s-0000000001"), e.create(c2, e.p("s-"), nil, zksim.ModeEphemeralSequential))
		}},
		{"per-parent-counters", func(e *env) {
			e.create(e.c, e.p("x"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("y"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("x", "s-"), nil, zksim.ModePersistentSequential)
			e.create(e.c, e.p("x", "s-"), nil, zksim.ModePersistentSequential)
			require.Equal(e.t, e.p("y", "s-0000000000"), e.create(e.c, e.p("y", "s-"), nil, zksim.ModePersistentSequential))
		}},
		{"trailing-slash-name", func(e *env) {
			e.create(e.c, e.p("q"), nil, zksim.ModePersistent)
			require.Equal(e.t, e.p("q", "0000000000"), e.create(e.c, e.p("q")+"/", nil, zksim.ModePersistentSequential))
			require.Equal(e.t, e.p("q", "0000000001"), e.create(e.c, e.p("q")+"/", nil, zksim.ModeEphemeralSequential))
		}},
		{"multi-consecutive", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			res, err := e.c.Multi(e.ctx,
				&zksim.CreateOp{Path: e.p("s-"), Mode: zksim.ModePersistentSequential, ACL: zksim.OpenACL()},
				&zksim.CreateOp{Path: e.p("b"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
				&zksim.CreateOp{Path: e.p("s-"), Mode: zksim.ModeEphemeralSequential, ACL: zksim.OpenACL()},
			)
			require.NoError(e.t, err)
			require.Len(e.t, res, 3)
			require.Equal(e.t, e.p("s-0000000001"), res[0].Path)
			require.Equal(e.t, e.p("b"), res[1].Path)
			require.Equal(e.t, e.p("s-0000000003"), res[2].Path)
		}},
		{"failed-multi-consumes-none", func(e *env) {
			_, err := e.c.Multi(e.ctx,
				&zksim.CreateOp{Path: e.p("s-"), Mode: zksim.ModePersistentSequential, ACL: zksim.OpenACL()},
				&zksim.CreateOp{Path: e.p("s-"), Mode: zksim.ModePersistentSequential, ACL: zksim.OpenACL()},
				&zksim.CreateOp{Path: e.p("missing", "a"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
			)
			e.is(err, zksim.ErrNoNode, "multi with a create under a missing parent")
			require.Equal(e.t, e.p("s-0000000000"), e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential))
		}},
		{"failed-create-consumes-none", func(e *env) {
			_, err := e.c.Create(e.ctx, e.p("s-"), nil, zksim.ModePersistentSequential, nil)
			e.is(err, zksim.ErrInvalidACL, "sequential create with an empty ACL")
			e.create(e.c, e.p("sub"), nil, zksim.ModePersistent)
			_, err = e.c.Create(e.ctx, e.p("sub", "s-"), nil, zksim.ModePersistentSequential, zksim.CreatorACL(zksim.PermAll))
			e.is(err, zksim.ErrInvalidACL, "sequential create with the creator ACL and no auth")
			require.Equal(e.t, e.p("s-0000000001"), e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential),
				"only the create of sub counts")
		}},
		{"collision-node-exists", func(e *env) {
			// A plain child named like the next sequential name makes the
			// sequential create fail, and the counter stays put.
			e.create(e.c, e.p("s-0000000001"), nil, zksim.ModePersistent)
			_, err := e.c.Create(e.ctx, e.p("s-"), nil, zksim.ModePersistentSequential, zksim.OpenACL())
			e.is(err, zksim.ErrNodeExists, "sequential create colliding with s-0000000001")
			_, err = e.c.Create(e.ctx, e.p("s-"), nil, zksim.ModeEphemeralSequential, zksim.OpenACL())
			e.is(err, zksim.ErrNodeExists, "the counter did not move on")
			require.Equal(e.t, e.p("t-0000000001"), e.create(e.c, e.p("t-"), nil, zksim.ModePersistentSequential))
		}},
		{"int32-wrap", func(e *env) {
			// After 2147483647 the counter wraps to -2147483648, and the
			// name carries the minus sign (%010d of a negative int32).
			e.needSequenceHook()
			require.NoError(e.t, e.b.SetNextSequence(e.ctx, e.p(), math.MaxInt32))
			require.Equal(e.t, e.p("s-2147483647"), e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential))
			require.Equal(e.t, e.p("s--2147483648"), e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential))
			require.Equal(e.t, e.p("s--2147483647"), e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential))
		}},
	}
}
