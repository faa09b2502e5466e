package gozk_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/zksim/zksim"
)

// doneOnFirstLook is a context that is cancelled the moment anyone asks for
// its Done channel. A call made with it passes its up-front ctx.Err() check,
// hands its request to go-zookeeper in the background and finds ctx done
// at its first wait: it is abandoned before go-zookeeper has (most likely)
// queued the request. It keeps context's contract: Err is nil until Done
// is closed, and Done always returns the same channel.
type doneOnFirstLook struct {
	context.Context
	cancel context.CancelFunc
}

func (c doneOnFirstLook) Done() <-chan struct{} {
	c.cancel()
	return c.Context.Done()
}

// A recipe that gives up on a create cleans up by listing the children and
// deleting its node. On the same Conn that cleanup must be ordered after the
// abandoned create, so that it finds the node whenever the create is
// applied: otherwise the create lands after the cleanup and leaves an
// orphan.
func TestOrderCleanupAfterCancelledCreate(t *testing.T) {
	srv, c, root := setup(t)
	client := srv.Connect(t)
	const rounds = 40
	abandoned := 0
	for i := range rounds {
		name := fmt.Sprintf("n%03d", i)
		ctx, cancel := context.WithCancel(context.Background())
		_, err := client.Create(doneOnFirstLook{ctx, cancel}, root+"/"+name, nil, zksim.ModePersistent, zksim.OpenACL())
		cancel()
		switch {
		case errors.Is(err, context.Canceled):
			abandoned++
		case err != nil:
			t.Fatalf("create %s: %v", name, err)
		}
		// The cleanup, right away on the same Conn.
		names, _, err := client.Children(context.Background(), root)
		must(t, "children", err)
		if slices.Contains(names, name) {
			must(t, "delete "+name, client.Delete(context.Background(), root+"/"+name, -1))
		}
	}
	if abandoned == 0 {
		t.Fatal("no create was abandoned: the test exercised nothing")
	}
	// Close waits for every call still running: every abandoned create has
	// been answered, applied or not.
	must(t, "close", client.Close())
	orphans, _, err := c.Children(context.Background(), root)
	must(t, "children after close", err)
	if len(orphans) != 0 {
		slices.Sort(orphans)
		t.Fatalf("%d of %d abandoned creates were applied after the cleanup that followed them: orphans %v", len(orphans), abandoned, orphans)
	}
	t.Logf("%d of %d creates abandoned, none left an orphan", abandoned, rounds)
}
