package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// sync(path): no existence check; it returns the path and orders the caller
// behind every write the server has seen.
func syncCases() []testCase {
	return []testCase{
		{"returns-path", func(e *env) {
			got, err := e.c.Sync(e.ctx, e.p())
			require.NoError(e.t, err)
			require.Equal(e.t, e.p(), got)
		}},
		{"missing-node-ok", func(e *env) {
			got, err := e.c.Sync(e.ctx, e.p("missing", "deeper"))
			require.NoError(e.t, err)
			require.Equal(e.t, e.p("missing", "deeper"), got)
		}},
		{"root-ok", func(e *env) {
			got, err := e.c.Sync(e.ctx, "/")
			require.NoError(e.t, err)
			require.Equal(e.t, "/", got)
		}},
		{"then-read-sees-other-session-write", func(e *env) {
			c2 := e.connect()
			e.create(c2, e.p("a"), []byte("x"), zksim.ModePersistent)
			_, err := e.c.Sync(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, []byte("x"), e.data(e.c, e.p("a")))
		}},
		{"needs-no-permission", func(e *env) {
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.WorldACL(0))
			_, err := e.c.Sync(e.ctx, e.p("a"))
			require.NoError(e.t, err)
		}},
	}
}
