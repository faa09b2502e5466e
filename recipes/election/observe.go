package election

import (
	"context"

	"github.com/zksim/zksim"
)

// lookFunc finds the leader with a watch that fires when it may have
// changed (see Election.look).
type lookFunc func(ctx context.Context, watch bool) (Leader, bool, <-chan zksim.Event, error)

// observe runs the Observe loop in a goroutine and returns its channel.
func observe(ctx context.Context, look lookFunc) <-chan Leader {
	out := make(chan Leader)
	go func() {
		defer close(out)
		var lastToken, lastMzxid int64
		for {
			l, ok, w, err := look(ctx, true)
			if err != nil {
				return // ctx done, session expired or Conn closed
			}
			if ok && (l.Token != lastToken || l.mzxid != lastMzxid) {
				select {
				case out <- l:
					lastToken, lastMzxid = l.Token, l.mzxid
				case <-ctx.Done():
					return
				}
			}
			if w == nil {
				continue // look again at once
			}
			select {
			case ev := <-w:
				if ev.Type == zksim.EventNotWatching {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
