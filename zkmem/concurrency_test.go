package zkmem_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// TestConcurrentCreateDeleteWatch runs many sessions creating, deleting and
// watching at once (under -race in CI) and checks what must hold whatever
// the interleaving: sequence numbers unique and dense, every watch fires
// exactly once, and the final tree matches the operations that succeeded.
func TestConcurrentCreateDeleteWatch(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	ctx := context.Background()
	admin, err := srv.Connect()
	require.NoError(t, err)
	_, err = admin.Create(ctx, "/seq", nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)
	_, err = admin.Create(ctx, "/churn", nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)

	const workers, perWorker = 8, 200
	var (
		mu      sync.Mutex
		created []string
		fired   int
		errs    []error
		wg      sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := srv.Connect()
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			defer c.Close()
			for i := 0; i < perWorker; i++ {
				p, err := c.Create(ctx, "/seq/n-", nil, zksim.ModePersistentSequential, zksim.OpenACL())
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				// Watch a shared node and churn it; the watch must fire once.
				churn := fmt.Sprintf("/churn/%d", i%5)
				_, _, ch, err := c.ExistsW(ctx, churn)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				if _, err := c.Create(ctx, churn, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil && !errors.Is(err, zksim.ErrNodeExists) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				if err := c.Delete(ctx, churn, -1); err != nil && !errors.Is(err, zksim.ErrNoNode) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				ev := <-ch // the node was created or deleted since the watch was set
				if _, open := <-ch; open {
					mu.Lock()
					errs = append(errs, fmt.Errorf("watch channel delivered twice"))
					mu.Unlock()
				}
				mu.Lock()
				created = append(created, p)
				if ev.Type == zksim.EventNodeCreated || ev.Type == zksim.EventNodeDeleted {
					fired++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Empty(t, errs)
	require.Equal(t, workers*perWorker, fired)

	sort.Strings(created)
	for i, p := range created {
		require.Equal(t, fmt.Sprintf("/seq/n-%010d", i), p, "sequence numbers are unique and dense")
	}
	names, st, err := admin.Children(ctx, "/seq")
	require.NoError(t, err)
	require.Len(t, names, workers*perWorker)
	require.Equal(t, int32(workers*perWorker), st.NumChildren)
	require.Equal(t, int32(workers*perWorker), st.Cversion)
}

// TestConcurrentEphemeralsAndExpiry expires sessions while others create
// ephemerals under the same parent: afterwards exactly the ephemerals of the
// surviving sessions remain.
func TestConcurrentEphemeralsAndExpiry(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	ctx := context.Background()
	admin, err := srv.Connect()
	require.NoError(t, err)
	_, err = admin.Create(ctx, "/e", nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)

	const sessions = 10
	conns := make([]*zkmem.Conn, sessions)
	for i := range conns {
		conns[i], err = srv.Connect()
		require.NoError(t, err)
		t.Cleanup(func() { conns[i].Close() })
	}
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 50; k++ {
				_, err := c.Create(ctx, "/e/s-", []byte{byte(i)}, zksim.ModeEphemeralSequential, zksim.OpenACL())
				if err != nil {
					return // expired under us: ErrSessionExpired or connection loss
				}
			}
			if i%2 == 0 {
				control(c).Expire()
			}
		}()
	}
	wg.Wait()
	names, _, err := admin.Children(ctx, "/e")
	require.NoError(t, err)
	require.Len(t, names, sessions/2*50)
	for _, n := range names {
		_, st, err := admin.Get(ctx, "/e/"+n)
		require.NoError(t, err)
		owner := -1
		for i, c := range conns {
			if c.SessionID() == st.EphemeralOwner {
				owner = i
			}
		}
		require.True(t, owner >= 0 && owner%2 == 1, "node %s owned by an expired or unknown session", n)
	}
}
