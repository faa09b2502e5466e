package zkserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The modes a member reports in `srvr`.
const (
	ModeLeader     = "leader"
	ModeFollower   = "follower"
	ModeObserver   = "observer"
	ModeReadOnly   = "read-only"
	ModeStandalone = "standalone"
)

// Mode returns the mode member i reports in `srvr` ("leader", "follower",
// "read-only", ...), or an error when it does not answer or serves no
// requests (it is down, or electing a leader).
func (e *Ensemble) Mode(ctx context.Context, i int) (string, error) {
	out, err := e.FourLetterWord(ctx, i, "srvr")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if mode, ok := strings.CutPrefix(strings.TrimSpace(line), "Mode: "); ok {
			return mode, nil
		}
	}
	return "", fmt.Errorf("zkserver: member %d serves no requests: %q", i, strings.TrimSpace(out))
}

// LastZxid returns the zxid of the last transaction member i applied, from
// `srvr`.
func (e *Ensemble) LastZxid(ctx context.Context, i int) (int64, error) {
	out, err := e.FourLetterWord(ctx, i, "srvr")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		if hex, ok := strings.CutPrefix(strings.TrimSpace(line), "Zxid: 0x"); ok {
			return strconv.ParseInt(hex, 16, 64)
		}
	}
	return 0, fmt.Errorf("zkserver: no Zxid in member %d's srvr answer %q", i, out)
}

// pollEvery is how often the waits below ask the members.
const pollEvery = 20 * time.Millisecond

// poll calls cond until it returns nil or ctx is done, then returns ctx's
// error with cond's last one.
func poll(ctx context.Context, what string, cond func(ctx context.Context) error) error {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		attempt, cancel := context.WithTimeout(ctx, time.Second)
		err := cond(attempt)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("zkserver: waiting for %s: %w (last: %v)", what, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// WaitMode blocks until member i reports one of modes, or ctx is done.
func (e *Ensemble) WaitMode(ctx context.Context, i int, modes ...string) error {
	return poll(ctx, fmt.Sprintf("member %d in mode %s", i, strings.Join(modes, " or ")), func(ctx context.Context) error {
		mode, err := e.Mode(ctx, i)
		if err != nil {
			return err
		}
		for _, m := range modes {
			if mode == m {
				return nil
			}
		}
		return fmt.Errorf("member %d is %s", i, mode)
	})
}

// Leader blocks until a quorum serves: one member leads and, with it, a
// majority of the members serves as leader or follower. It returns the
// leader's index, or an error when ctx is done first.
func (e *Ensemble) Leader(ctx context.Context) (int, error) {
	leader := -1
	err := poll(ctx, "a serving quorum", func(ctx context.Context) error {
		leader = -1
		serving := 0
		for i := range e.members {
			mode, err := e.Mode(ctx, i)
			if err != nil {
				continue
			}
			switch mode {
			case ModeLeader:
				if leader >= 0 {
					return fmt.Errorf("members %d and %d both lead", leader, i)
				}
				leader = i
				serving++
			case ModeFollower:
				serving++
			}
		}
		if leader < 0 || 2*serving <= len(e.members) {
			return fmt.Errorf("leader %d, %d members serving", leader, serving)
		}
		return nil
	})
	if err != nil {
		return -1, err
	}
	return leader, nil
}

// Isolate cuts member i off from the other members: every quorum and
// election link to and from it is closed, and new connections on them are
// held unanswered until Heal. The member leaves the quorum at once (its
// connections close), dropping its clients as it does, and, since
// read-only mode is on, serves read-only clients about two seconds later
// (WaitMode(ctx, i, ModeReadOnly)); if it led, the others elect a new
// leader.
func (e *Ensemble) Isolate(i int) { e.setIsolated(i, true) }

// Heal undoes Isolate: the links of member i carry connections again, so
// it rejoins the quorum (wait for it with WaitMode).
func (e *Ensemble) Heal(i int) { e.setIsolated(i, false) }

func (e *Ensemble) setIsolated(i int, cut bool) {
	e.mustLink("Isolate and Heal")
	for j := range e.members {
		if j == i {
			continue
		}
		for _, l := range []*link{e.quorum[i][j], e.quorum[j][i], e.election[i][j], e.election[j][i]} {
			l.setCut(cut)
		}
	}
}

// Lag makes member i fall behind: everything the other members send it
// over the quorum links (proposals, commits, the answers to its syncs, the
// leader's pings) is held, in order, until CatchUp; what it sends still
// goes. A lagging follower keeps serving its clients from the state it had
// applied: their reads are stale, their writes and syncs are answered only
// after CatchUp, and the rest of the quorum commits without it. Lagging
// the leader stops every commit, since the followers' acks are held. A
// member lagging longer than syncLimit ticks (5s by default) gives up on
// the quorum and rejoins it, as a real one would.
func (e *Ensemble) Lag(i int) { e.setLag(i, true) }

// CatchUp undoes Lag: the held messages are delivered, in order, and member
// i applies them.
func (e *Ensemble) CatchUp(i int) { e.setLag(i, false) }

func (e *Ensemble) setLag(i int, hold bool) {
	e.mustLink("Lag and CatchUp")
	for j := range e.members {
		if j == i {
			continue
		}
		e.quorum[i][j].setHold(false, hold) // what j answers on i's links
		e.quorum[j][i].setHold(true, hold)  // what j sends on its links to i
	}
}

// mustLink panics for an ensemble of WithDirectLinks, whose members do not
// talk through the links the controls act on.
func (e *Ensemble) mustLink(controls string) {
	if e.cfg.direct {
		panic("zkserver: " + controls + " need the links an ensemble started WithDirectLinks does not use")
	}
}
