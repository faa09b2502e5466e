package contend

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/seqnode"
	"github.com/zksim/zksim/zkmem"
)

// TestOrderAcrossWrap puts three contenders at the int32 wrap (their
// names made by hand, as no test can create 2^31 nodes): the one numbered
// 2147483647 was created first and holds; -2147483648 waits for it, and
// -2147483647 for that one. Sorting the names as text or the numbers as
// integers would both get this wrong.
func TestOrderAcrossWrap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		srv := zkmem.NewServer(zkmem.Options{})
		defer srv.Close()
		const dir = "/lock"
		var conns []*zkmem.Conn
		var paths []string
		for i, seq := range []string{"2147483647", "-2147483648", "-2147483647"} {
			c, err := srv.Connect()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if i == 0 {
				if _, err := c.Create(ctx, dir, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
					t.Fatal(err)
				}
			}
			p := dir + "/" + seqnode.ProtectedName(seqnode.NewGUID(nil), "lock-") + seq
			if _, err := c.Create(ctx, p, nil, zksim.ModeEphemeral, zksim.OpenACL()); err != nil {
				t.Fatal(err)
			}
			conns, paths = append(conns, c), append(paths, p)
		}
		contender := func(i int) *Contender {
			return &Contender{Conn: conns[i], Dir: dir, Name: "lock-", Markers: []string{"lock-"}, Rule: Exclusive}
		}
		if _, err := contender(0).wait(ctx, paths[0], true); err != nil {
			t.Fatalf("2147483647 should hold at once: %v", err)
		}
		if _, err := contender(1).wait(ctx, paths[1], true); !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("-2147483648 try: %v, want ErrWouldBlock", err)
		}
		results := make([]chan error, 3)
		for i := 1; i < 3; i++ {
			results[i] = make(chan error, 1)
			go func() {
				_, err := contender(i).wait(ctx, paths[i], false)
				results[i] <- err
			}()
		}
		synctest.Wait()
		for i := 1; i < 3; i++ {
			if len(results[i]) != 0 {
				t.Fatalf("contender %d holds while the first does", i)
			}
		}
		for i := 0; i < 2; i++ {
			if err := conns[i].Delete(ctx, paths[i], -1); err != nil {
				t.Fatal(err)
			}
			if err := <-results[i+1]; err != nil {
				t.Fatalf("contender %d: %v", i+1, err)
			}
			synctest.Wait()
			if i == 0 && len(results[2]) != 0 {
				t.Fatal("-2147483647 holds before -2147483648 released")
			}
		}
	})
}
