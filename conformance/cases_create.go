package conformance

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// Create in every mode, and the errors of create that need no ordering.
func createCases() []testCase {
	cases := []testCase{
		{"persistent-data-round-trip", func(e *env) {
			data := make([]byte, 256)
			for i := range data {
				data[i] = byte(i)
			}
			e.create(e.c, e.p("a"), data, zksim.ModePersistent)
			got, st, err := e.c.Get(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, data, got)
			require.Equal(e.t, int32(256), st.DataLength)
		}},
		{"persistent-survives-session-close", func(e *env) {
			c2 := e.connect()
			e.create(c2, e.p("a"), []byte("x"), zksim.ModePersistent)
			require.NoError(e.t, c2.Close())
			require.Equal(e.t, []byte("x"), e.data(e.c, e.p("a")))
			require.Zero(e.t, e.stat(e.c, e.p("a")).EphemeralOwner)
		}},
		{"ephemeral-owner-is-session", func(e *env) {
			e.create(e.c, e.p("e"), nil, zksim.ModeEphemeral)
			require.NotZero(e.t, e.c.SessionID())
			require.Equal(e.t, e.c.SessionID(), e.stat(e.c, e.p("e")).EphemeralOwner)
			c2 := e.connect()
			require.Equal(e.t, e.c.SessionID(), e.stat(c2, e.p("e")).EphemeralOwner, "as another session sees it")
		}},
		{"ephemeral-gone-after-close", func(e *env) {
			c2 := e.connect()
			e.create(c2, e.p("e"), nil, zksim.ModeEphemeral)
			require.True(e.t, e.exists(e.c, e.p("e")))
			require.NoError(e.t, c2.Close())
			require.False(e.t, e.exists(e.c, e.p("e")), "the ephemeral outlived its session's Close")
		}},
		{"persistent-sequential-name", func(e *env) {
			got := e.create(e.c, e.p("s-"), []byte("x"), zksim.ModePersistentSequential)
			require.Equal(e.t, e.p("s-0000000000"), got)
			require.Equal(e.t, []byte("x"), e.data(e.c, got))
			require.Zero(e.t, e.stat(e.c, got).EphemeralOwner)
		}},
		{"ephemeral-sequential-name-and-owner", func(e *env) {
			got := e.create(e.c, e.p("s-"), nil, zksim.ModeEphemeralSequential)
			require.Equal(e.t, e.p("s-0000000000"), got)
			require.Equal(e.t, e.c.SessionID(), e.stat(e.c, got).EphemeralOwner)
		}},
		{"container-owner-zero", func(e *env) {
			e.create(e.c, e.p("c"), []byte("x"), zksim.ModeContainer)
			st := e.stat(e.c, e.p("c"))
			require.Zero(e.t, st.EphemeralOwner, "containers report owner 0: %v", st)
			require.Equal(e.t, []byte("x"), e.data(e.c, e.p("c")))
		}},
		{"container-can-have-children", func(e *env) {
			e.create(e.c, e.p("c"), nil, zksim.ModeContainer)
			e.create(e.c, e.p("c", "a"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("c", "b"), nil, zksim.ModeEphemeral)
			require.Equal(e.t, []string{"a", "b"}, e.children(e.c, e.p("c")))
		}},
		{"container-survives-session-close", func(e *env) {
			c2 := e.connect()
			e.create(c2, e.p("c"), nil, zksim.ModeContainer)
			require.NoError(e.t, c2.Close())
			require.True(e.t, e.exists(e.c, e.p("c")))
		}},
		{"node-exists", func(e *env) {
			e.create(e.c, e.p("a"), []byte("first"), zksim.ModePersistent)
			for _, mode := range []zksim.CreateMode{zksim.ModePersistent, zksim.ModeEphemeral, zksim.ModeContainer} {
				_, err := e.c.Create(e.ctx, e.p("a"), []byte("second"), mode, zksim.OpenACL())
				e.is(err, zksim.ErrNodeExists, "create %s again as %v", e.p("a"), mode)
			}
			require.Equal(e.t, []byte("first"), e.data(e.c, e.p("a")))
		}},
		{"no-parent-no-node", func(e *env) {
			for _, mode := range []zksim.CreateMode{zksim.ModePersistent, zksim.ModeEphemeral, zksim.ModePersistentSequential, zksim.ModeContainer} {
				_, err := e.c.Create(e.ctx, e.p("missing", "a"), nil, mode, zksim.OpenACL())
				e.is(err, zksim.ErrNoNode, "create under a missing parent as %v", mode)
			}
		}},
		{"invalid-mode-bad-arguments", func(e *env) {
			_, err := e.c.Create(e.ctx, e.p("a"), nil, zksim.CreateMode(42), zksim.OpenACL())
			e.is(err, zksim.ErrBadArguments, "create with mode 42")
			require.False(e.t, e.exists(e.c, e.p("a")))
		}},
		{"ttl-with-non-ttl-mode-bad-arguments", func(e *env) {
			// CreateTTL takes only the TTL modes (the Java client rejects
			// the others with a ttl; so does the server).
			_, err := e.c.CreateTTL(e.ctx, e.p("a"), nil, zksim.ModePersistent, zksim.OpenACL(), time.Second)
			e.is(err, zksim.ErrBadArguments, "CreateTTL with ModePersistent")
			require.False(e.t, e.exists(e.c, e.p("a")))
		}},
	}
	cases = append(cases, noChildrenForEphemeralsCases()...)
	cases = append(cases, ttlCreateCases()...)
	return cases
}

// noChildrenForEphemeralsCases: an ephemeral parent refuses children of
// every mode.
func noChildrenForEphemeralsCases() []testCase {
	modes := []struct {
		name string
		mode zksim.CreateMode
		ttl  bool
	}{
		{"persistent", zksim.ModePersistent, false},
		{"ephemeral", zksim.ModeEphemeral, false},
		{"persistent-sequential", zksim.ModePersistentSequential, false},
		{"ephemeral-sequential", zksim.ModeEphemeralSequential, false},
		{"container", zksim.ModeContainer, false},
		{"ttl", zksim.ModePersistentWithTTL, true},
	}
	var cases []testCase
	for _, m := range modes {
		cases = append(cases, testCase{"ephemeral-parent-refuses-" + m.name + "-child", func(e *env) {
			if m.ttl {
				e.needExtendedTypes()
			}
			e.create(e.c, e.p("e"), nil, zksim.ModeEphemeral)
			var err error
			if m.ttl {
				_, err = e.c.CreateTTL(e.ctx, e.p("e", "a"), nil, m.mode, zksim.OpenACL(), time.Hour)
			} else {
				_, err = e.c.Create(e.ctx, e.p("e", "a"), nil, m.mode, zksim.OpenACL())
			}
			e.is(err, zksim.ErrNoChildrenForEphemerals, "create a %v child of an ephemeral", m.mode)
			require.Empty(e.t, e.children(e.c, e.p("e")))
			st := e.stat(e.c, e.p("e"))
			require.Zero(e.t, st.Cversion, "a refused child bumped the parent's cversion: %v", st)
		}})
	}
	return cases
}

// ttlCreateCases: TTL nodes (zookeeper.extendedTypesEnabled).
func ttlCreateCases() []testCase {
	return []testCase{
		{"ttl-disabled-unimplemented", func(e *env) {
			e.needNoExtendedTypes()
			_, err := e.c.CreateTTL(e.ctx, e.p("t"), nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), time.Hour)
			e.is(err, zksim.ErrUnimplemented, "CreateTTL with extended types off")
			require.False(e.t, e.exists(e.c, e.p("t")))
		}},
		{"ttl-sequential-disabled-unimplemented", func(e *env) {
			e.needNoExtendedTypes()
			_, err := e.c.CreateTTL(e.ctx, e.p("t-"), nil, zksim.ModePersistentSequentialWithTTL, zksim.OpenACL(), time.Hour)
			e.is(err, zksim.ErrUnimplemented, "sequential CreateTTL with extended types off")
			require.Empty(e.t, e.children(e.c, e.p()))
		}},
		{"ttl-disabled-unimplemented-before-bad-ttl", func(e *env) {
			// The extended-types check comes before the TTL value check.
			e.needNoExtendedTypes()
			_, err := e.c.CreateTTL(e.ctx, e.p("t"), nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), 0)
			e.is(err, zksim.ErrUnimplemented, "CreateTTL with ttl 0 and extended types off")
		}},
		{"ttl-node", func(e *env) {
			e.needExtendedTypes()
			got, err := e.c.CreateTTL(e.ctx, e.p("t"), []byte("x"), zksim.ModePersistentWithTTL, zksim.OpenACL(), time.Hour)
			require.NoError(e.t, err)
			require.Equal(e.t, e.p("t"), got)
			st := e.stat(e.c, got)
			require.Zero(e.t, st.EphemeralOwner, "TTL nodes report owner 0: %v", st)
			require.Equal(e.t, []byte("x"), e.data(e.c, got))
		}},
		{"ttl-sequential-name", func(e *env) {
			e.needExtendedTypes()
			got, err := e.c.CreateTTL(e.ctx, e.p("t-"), nil, zksim.ModePersistentSequentialWithTTL, zksim.OpenACL(), time.Hour)
			require.NoError(e.t, err)
			require.Equal(e.t, e.p("t-0000000000"), got)
			require.Zero(e.t, e.stat(e.c, got).EphemeralOwner)
		}},
		{"ttl-node-can-have-children", func(e *env) {
			e.needExtendedTypes()
			_, err := e.c.CreateTTL(e.ctx, e.p("t"), nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), time.Hour)
			require.NoError(e.t, err)
			e.create(e.c, e.p("t", "a"), nil, zksim.ModePersistent)
			require.Equal(e.t, []string{"a"}, e.children(e.c, e.p("t")))
		}},
		{"ttl-zero-bad-arguments", func(e *env) {
			e.needExtendedTypes()
			_, err := e.c.CreateTTL(e.ctx, e.p("t"), nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), 0)
			e.is(err, zksim.ErrBadArguments, "CreateTTL with ttl 0")
			require.False(e.t, e.exists(e.c, e.p("t")))
		}},
		{"ttl-negative-bad-arguments", func(e *env) {
			e.needExtendedTypes()
			_, err := e.c.CreateTTL(e.ctx, e.p("t"), nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), -time.Second)
			e.is(err, zksim.ErrBadArguments, "CreateTTL with a negative ttl")
		}},
		{"ttl-above-max-bad-arguments", func(e *env) {
			e.needExtendedTypes()
			ttl := time.Duration(zksim.MaxTTLMillis+1) * time.Millisecond
			_, err := e.c.CreateTTL(e.ctx, e.p("t"), nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), ttl)
			e.is(err, zksim.ErrBadArguments, "CreateTTL with ttl 2^40 ms")
			require.False(e.t, e.exists(e.c, e.p("t")))
		}},
		{"ttl-max-accepted", func(e *env) {
			e.needExtendedTypes()
			ttl := time.Duration(zksim.MaxTTLMillis) * time.Millisecond
			_, err := e.c.CreateTTL(e.ctx, e.p("t"), nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), ttl)
			require.NoError(e.t, err, "CreateTTL with ttl 2^40-1 ms")
		}},
		{"ttl-mode-without-ttl-bad-arguments", func(e *env) {
			// Create (no ttl) with a TTL mode: the client, like the server,
			// refuses a TTL mode without a valid ttl.
			e.needExtendedTypes()
			_, err := e.c.Create(e.ctx, e.p("t"), nil, zksim.ModePersistentWithTTL, zksim.OpenACL())
			e.is(err, zksim.ErrBadArguments, "Create with ModePersistentWithTTL")
			require.False(e.t, e.exists(e.c, e.p("t")))
		}},
	}
}
