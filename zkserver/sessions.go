package zkserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SessionAlive reports whether the server still tracks the session with the
// given id, according to the `dump` four-letter word.
func (s *Server) SessionAlive(ctx context.Context, id int64) (bool, error) {
	dump, err := s.FourLetterWord(ctx, "dump")
	if err != nil {
		return false, err
	}
	tracker, _, found := strings.Cut(dump, "ephemeral nodes dump:")
	if !found {
		return false, fmt.Errorf("zkserver: unexpected dump output: %q", dump)
	}
	needle := fmt.Sprintf("0x%x", id)
	for _, field := range strings.Fields(tracker) {
		if field == needle {
			return true, nil
		}
	}
	return false, nil
}

// WaitSessionGone blocks until the server no longer tracks the session (it
// expired or was closed), or ctx is done. A test that cut a client's
// connection with a Proxy calls it before Restore to be sure the client
// will find its session expired.
func (s *Server) WaitSessionGone(ctx context.Context, id int64) error {
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for {
		alive, err := s.SessionAlive(ctx, id)
		if err != nil {
			return err
		}
		if !alive {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-poll.C:
		}
	}
}

// LastZxid returns the zxid of the last transaction the server applied,
// from the `srvr` four-letter word. Every write, failed or not, and every
// session open and close consumes one.
func (s *Server) LastZxid(ctx context.Context) (int64, error) {
	out, err := s.FourLetterWord(ctx, "srvr")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		if hex, ok := strings.CutPrefix(strings.TrimSpace(line), "Zxid: 0x"); ok {
			return strconv.ParseInt(hex, 16, 64)
		}
	}
	return 0, fmt.Errorf("zkserver: no Zxid in the srvr answer %q", out)
}
