package zkserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"
)

// FourLetterWord sends a four-letter-word command ("ruok", "srvr", "cons",
// "dump", "mntr", ...) to the ZooKeeper at addr and returns its answer. It
// blocks until the server has answered and closed the connection, or ctx is
// done.
func FourLetterWord(ctx context.Context, addr, cmd string) (string, error) {
	if len(cmd) != 4 {
		return "", fmt.Errorf("zkserver: four-letter word %q is not four letters", cmd)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", wrapCtx(ctx, err)
	}
	answer, err := io.ReadAll(conn)
	if err != nil {
		return "", wrapCtx(ctx, err)
	}
	return string(answer), nil
}

// wrapCtx prefers ctx's error to the I/O error its cancellation caused.
func wrapCtx(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return err
}
