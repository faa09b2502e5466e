package history_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/history"
)

// laggingConn is a planted bug: a Conn wrapper that remembers what each
// Get returned and serves every third Get of a path from its oldest
// remembered copy, even after the client has seen newer data (a follower
// that serves a client from a state older than one the client saw).
type laggingConn struct {
	zksim.Conn
	mu    sync.Mutex
	gets  int
	stale map[string][]snapshot
}

type snapshot struct {
	data []byte
	stat zksim.Stat
}

func lagging(_ int, c zksim.Conn) zksim.Conn {
	return &laggingConn{Conn: c, stale: map[string][]snapshot{}}
}

func (c *laggingConn) Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error) {
	data, st, err := c.Conn.Get(ctx, path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		return data, st, err
	}
	old := c.stale[path]
	c.gets++
	if c.gets%3 == 0 && len(old) > 0 {
		s := old[0]
		return slices.Clone(s.data), &s.stat, nil
	}
	c.stale[path] = append(old, snapshot{slices.Clone(data), *st})
	return data, st, nil
}

// TestSimCatchesLaggingReads runs the workload on the simulator with the
// planted bug: the checker must catch it on most seeds.
func TestSimCatchesLaggingReads(t *testing.T) {
	const n = 20
	caught := 0
	for seed := range uint64(n) {
		_, err := simRun(t, seed, 4, 0, lagging)
		var herr *history.Error
		if errors.As(err, &herr) {
			require.True(t, herr.Has(history.Monotonic) || herr.Has(history.ReadYourWrites), "caught by the wrong rule: %v", err)
			caught++
			if caught == 1 {
				t.Logf("seed %d: %v", seed, err)
			}
		} else {
			require.NoError(t, err)
		}
	}
	t.Logf("caught on %d of %d seeds", caught, n)
	require.GreaterOrEqual(t, caught, n*3/4)
}

// losingConn is a planted bug: every second Set is acknowledged with a
// made-up Stat (the version after the last one seen, a fresh mzxid) and
// never sent.
type losingConn struct {
	zksim.Conn
	mu   sync.Mutex
	sets int
	last map[string]zksim.Stat
}

func losing(_ int, c zksim.Conn) zksim.Conn {
	return &losingConn{Conn: c, last: map[string]zksim.Stat{}}
}

func (c *losingConn) Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error) {
	data, st, err := c.Conn.Get(ctx, path)
	if err == nil {
		c.mu.Lock()
		c.last[path] = *st
		c.mu.Unlock()
	}
	return data, st, err
}

func (c *losingConn) Set(ctx context.Context, path string, data []byte, version int32) (*zksim.Stat, error) {
	c.mu.Lock()
	c.sets++
	st, ok := c.last[path]
	lose := c.sets%2 == 0 && ok
	c.mu.Unlock()
	if lose {
		st.Version++
		st.Mzxid += 1000
		return &st, nil
	}
	return c.Conn.Set(ctx, path, data, version)
}

// TestSimCatchesLostWrites: acknowledged writes that never happened.
func TestSimCatchesLostWrites(t *testing.T) {
	const n = 20
	caught := 0
	for seed := range uint64(n) {
		_, err := simRun(t, seed, 4, 0, losing)
		var herr *history.Error
		if errors.As(err, &herr) {
			caught++
			if caught == 1 {
				t.Logf("seed %d: %v", seed, err)
			}
		} else {
			require.NoError(t, err)
		}
	}
	t.Logf("caught on %d of %d seeds", caught, n)
	require.GreaterOrEqual(t, caught, n*3/4)
}
