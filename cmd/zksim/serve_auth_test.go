package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	zk "github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/digestmd5"
	"github.com/zksim/zksim/zkwire/jute"
)

const testJAAS = `Server {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    user_bob="bobpw";
};
`

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jaas.conf")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestServeAuthFlagErrors: a bad -jaas, -saslUser or -superDigest is a
// usage error naming the flag (exit status 2, as every bad value of
// zksim serve), and nothing listens.
func TestServeAuthFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-saslUser", "bob"}, `invalid value "bob" for flag -saslUser: want NAME:PASSWORD`},
		{[]string{"-saslUser", ":pw"}, `flag -saslUser: want NAME:PASSWORD`},
		{[]string{"-jaas", filepath.Join(t.TempDir(), "missing")}, "zksim serve: -jaas: open "},
		{[]string{"-jaas", writeFile(t, "Client { M required; };")}, `jaas: no section "Server"`},
		{[]string{"-jaas", writeFile(t, "Server { M required user_a=; };")}, "jaas: line 1: option user_a: expected a value"},
		{[]string{"-superDigest", "super"}, `-superDigest "super": want NAME:BASE64`},
		{[]string{"-superDigest", "super:c2hvcnQ="}, `-superDigest "super:c2hvcnQ=": want NAME:BASE64`},
	} {
		var stdout, stderr strings.Builder
		err := serve(context.Background(), append([]string{"-addr", "127.0.0.1:0", "-control", ""}, tc.args...), &stdout, &stderr)
		var usage usageError
		if !errors.As(err, &usage) || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: %v, stderr %q; want a usage error saying %q", tc.args, err, stderr.String(), tc.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("%q printed %q", tc.args, stdout.String())
		}
	}
}

// TestServeSASL runs "zksim serve" with users from a JAAS file and a flag
// and a superDigest, and authenticates against it.
func TestServeSASL(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"-addr", "127.0.0.1:0", "-control", "", "-jaas", writeFile(t, testJAAS),
			"-saslUser", "carol:c:pw", "-saslUser", "dave:", "-superDigest", zk.DigestID("super", "sekret")}, w, io.Discard)
		w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("serve printed nothing: %v", lines.Err())
	}
	addr, ok := strings.CutPrefix(lines.Text(), "listening on ")
	if !ok {
		t.Fatalf("first line %q", lines.Text())
	}
	go io.Copy(io.Discard, out)

	for _, tc := range []struct {
		user, password string
		want           int32
	}{
		{"bob", "bobpw", 0}, {"carol", "c:pw", 0}, {"dave", "", 0},
		{"bob", "wrong", jute.ErrAuthFailed}, {"super", "sekret", jute.ErrAuthFailed},
	} {
		if got := saslLogin(t, addr, tc.user, tc.password); got != tc.want {
			t.Errorf("%s with %q: error %d, want %d", tc.user, tc.password, got, tc.want)
		}
	}
}

// saslLogin opens a session at addr, authenticates with DIGEST-MD5 and
// returns the error code of the last reply.
func saslLogin(t *testing.T, addr, user, password string) int32 {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(nc)
	read := func(rec ...jute.Record) {
		t.Helper()
		b, err := jute.ReadFrame(br, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := jute.NewDecoder(b)
		for _, r := range rec {
			r.Decode(d)
		}
		if d.Err() != nil {
			t.Fatal(d.Err())
		}
	}
	nc.Write(jute.AppendFrame(nil, &jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}))
	read(&jute.ConnectResponse{})
	c := digestmd5.NewClient(user, password, []byte("cnonce"))
	var tok []byte
	for xid := int32(1); ; xid++ {
		out, err := c.Step(tok)
		if err != nil {
			t.Fatal(err)
		}
		if c.Complete() {
			return 0
		}
		nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: xid, Type: jute.OpSasl}, &jute.SASLToken{Token: out}))
		var h jute.ReplyHeader
		var body jute.SASLToken
		read(&h, &body)
		if h.Err != 0 {
			return h.Err
		}
		tok = body.Token
	}
}
