package contend

import (
	"context"
	"errors"
	"sync"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/internal/hold"
	"github.com/zksim/zksim/recipes/internal/retry"
)

// ErrBusy is what Holder.Acquire returns, having done nothing, while the
// Holder holds (a hold that has not ended) or another Acquire is under way.
var ErrBusy = errors.New("recipes: already holding or acquiring")

// ErrNothingHeld is what Holder.Release returns when there is nothing to
// release: no hold yet, an Acquire under way, or the last hold's node
// already deleted by Release.
var ErrNothingHeld = errors.New("recipes: nothing held")

// Holder takes the holds of one Contender, one at a time, and keeps the
// current or last one: the state behind a Mutex and an Election. Acquire
// and Release must not be called concurrently; the other methods are safe
// at any time.
type Holder struct {
	c Contender

	mu        sync.Mutex
	acquiring bool
	h         *Hold // the current or last hold
	undeleted bool  // h's node has not been deleted by Release
}

// NewHolder returns a Holder that contends as c. Nothing is sent to the
// server until Acquire.
func NewHolder(c Contender) *Holder { return &Holder{c: c} }

// Acquire takes a new hold whose node carries data, as Contender.Acquire
// does. When the last hold was Lost without a Release it first deletes
// what is left of it, under retry.CleanupContext (waiting out connection
// losses even after ctx is done, for as long as the session may be
// alive); if the session the call began on ends
// meanwhile (a client library that renews it goes on with another), it
// returns zksim.ErrSessionExpired without contending. It returns ErrBusy
// while a hold has not ended or another Acquire is under way.
func (s *Holder) Acquire(ctx context.Context, data []byte, try bool) error {
	return s.take(ctx, func() (*Hold, error) { return s.c.Acquire(ctx, data, try) })
}

// take runs acquire as Acquire describes.
func (s *Holder) take(ctx context.Context, acquire func() (*Hold, error)) error {
	s.mu.Lock()
	if s.acquiring || (s.h != nil && !s.h.State().Final()) {
		s.mu.Unlock()
		return ErrBusy
	}
	s.acquiring = true
	old := s.h
	if !s.undeleted {
		old = nil
	}
	s.mu.Unlock()
	var err error
	if old != nil {
		// The node may outlive the hold (a suspension that lasted the
		// session timeout but not an expiry; on an ensemble without a
		// leader the session lives on): delete it first, as a cleanup
		// that outlives ctx, for as long as the session may be alive,
		// since it would block every other contender. A call belongs to
		// the session it began on (recipes/doc.go): if that session ended
		// meanwhile (a client library that renews it goes on with
		// another), the call ends here.
		session := s.c.Conn.SessionID()
		cctx, cancel := retry.CleanupContext(ctx)
		_ = s.c.Release(cctx, old)
		cancel()
		if session != 0 && s.c.Conn.SessionID() != session {
			err = zksim.ErrSessionExpired
		}
	}
	var h *Hold
	if err == nil {
		h, err = acquire()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acquiring = false
	if err != nil {
		return err
	}
	s.h, s.undeleted = h, true
	return nil
}

// Adopt takes the existing node p as a new hold, as Contender.Adopt does;
// otherwise it is Acquire.
func (s *Holder) Adopt(ctx context.Context, p string) error {
	return s.take(ctx, func() (*Hold, error) { return s.c.Adopt(ctx, p) })
}

// Release ends the current or last hold and deletes its node, as
// Contender.Release does. When ctx is done before the delete, the node
// stays and Release may be called again. It returns ErrNothingHeld when
// there is nothing to release.
func (s *Holder) Release(ctx context.Context) error {
	s.mu.Lock()
	h := s.h
	if h == nil || s.acquiring || !s.undeleted {
		s.mu.Unlock()
		return ErrNothingHeld
	}
	s.mu.Unlock()
	if err := s.c.Release(ctx, h); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == h {
		s.undeleted = false
	}
	return nil
}

// Current returns the hold that has not ended, nil when there is none (no
// hold yet, or the last one Lost or Released).
func (s *Holder) Current() *Hold {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil || !s.undeleted || s.h.State().Final() {
		return nil
	}
	return s.h
}

// Guard returns a check op that succeeds while the node of the current hold
// exists, for a Multi that must apply only while the hold lasts; false
// when there is no current hold.
func (s *Holder) Guard() (zksim.Op, bool) {
	h := s.Current()
	if h == nil {
		return nil, false
	}
	return h.Guard(), true
}

// Key returns the path of the node of the current or last hold, "" before
// the first hold.
func (s *Holder) Key() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return ""
	}
	return s.h.Path
}

// Token returns the fencing token (the node's czxid) of the current or last
// hold, 0 before the first hold.
func (s *Holder) Token() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return 0
	}
	return s.h.Token
}

// State returns the state of the current or last hold; NotHeld before the
// first hold.
func (s *Holder) State() recipes.HoldState { return s.tracker().State() }

// Watch returns the state of the current or last hold and a channel closed
// at its next change (already closed once the hold has ended, or before
// the first hold).
func (s *Holder) Watch() (recipes.HoldState, <-chan struct{}) { return s.tracker().Watch() }

// Done returns a channel closed when the current hold ends; already closed
// when there is no hold that has not ended.
func (s *Holder) Done() <-chan struct{} { return s.tracker().Done() }

// tracker returns the tracker of the current or last hold, nil (NotHeld,
// closed channels) before the first hold.
func (s *Holder) tracker() *hold.Tracker {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return nil
	}
	return s.h.Tracker
}
