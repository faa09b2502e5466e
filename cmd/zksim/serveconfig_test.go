package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestServeBadConfiguration: a flag value a server cannot run with is
// refused before anything listens: a message naming the flag, a usage
// error (exit status 2), nothing printed as listening.
func TestServeBadConfiguration(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		args []string
		flag string // named in the message
	}{
		{[]string{"-minSessionTimeout", "10s", "-maxSessionTimeout", "5s"}, "-minSessionTimeout"},
		{[]string{"-minSessionTimeout", "50s"}, "-minSessionTimeout"}, // above the default 40s
		{[]string{"-tickTime", "1s", "-maxSessionTimeout", "1s"}, "-minSessionTimeout"},
		{[]string{"-tickTime", "1ns"}, "-tickTime"},
		{[]string{"-tickTime", "1500us"}, "-tickTime"},
		{[]string{"-tickTime", "0s"}, "-tickTime"},
		{[]string{"-tickTime", "-2s"}, "-tickTime"},
		{[]string{"-minSessionTimeout", "-1s"}, "-minSessionTimeout"},
		{[]string{"-maxSessionTimeout", "-1s"}, "-maxSessionTimeout"},
		{[]string{"-maxSessionTimeout", "2500us"}, "-maxSessionTimeout"},
		{[]string{"-maxSessionTimeout", "1000h"}, "-maxSessionTimeout"},
		{[]string{"-jute.maxbuffer", "0"}, "-jute.maxbuffer"},
		{[]string{"-jute.maxbuffer", "-1"}, "-jute.maxbuffer"},
		{[]string{"-containerCheckInterval", "0s"}, "-containerCheckInterval"},
		{[]string{"-containerCheckInterval", "-1m"}, "-containerCheckInterval"},
		{[]string{"-addr", busy.Addr().String()}, "-addr"},
		{[]string{"-addr", "256.0.0.1:1"}, "-addr"},
		{[]string{"-control", busy.Addr().String()}, "-control"},
		{[]string{"-control", "0.0.0.0:0"}, "-control"},
		{[]string{"-control", ":0"}, "-control"},
		{[]string{"-servers", "0"}, "-servers"},
		{[]string{"-servers", "255"}, "-servers"},
		{[]string{"-readonlymode.enabled"}, "-readonlymode.enabled"},
		{[]string{"-servers", "3", "-observers", "3"}, "-observers"},
		{[]string{"-observers", "1"}, "-observers"},
		{[]string{"-servers", "3", "-observers", "-1"}, "-observers"},
		{[]string{"-servers", "3", "-addr", busy.Addr().String()}, "-addr"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			args := append([]string{"-addr", "127.0.0.1:0"}, tc.args...)
			err := serve(context.Background(), args, &stdout, &stderr)
			var usage usageError
			if !errors.As(err, &usage) {
				t.Fatalf("serve %v = %v, want a usage error (exit status 2)", tc.args, err)
			}
			if !strings.Contains(stderr.String(), tc.flag+" ") {
				t.Errorf("stderr %q does not name %s", stderr.String(), tc.flag)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing printed", stdout.String())
			}
		})
	}
}

// TestServeBadConfigurationExitStatus runs "zksim serve" as a process with
// bad flags: exit status 2, nothing on stdout, the flag on stderr.
func TestServeBadConfigurationExitStatus(t *testing.T) {
	for _, args := range []string{
		"serve -addr 127.0.0.1:0 -minSessionTimeout 10s -maxSessionTimeout 5s",
		"serve -addr 127.0.0.1:0 -control 0.0.0.0:0",
	} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "ZKSIM_TEST_MAIN=1", "ZKSIM_TEST_ARGS="+args)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("zksim %s: %v, want exit status 2", args, err)
		}
		if stdout.Len() != 0 || !strings.Contains(stderr.String(), "zksim serve: -") {
			t.Errorf("zksim %s: stdout %q, stderr %q", args, stdout.String(), stderr.String())
		}
	}
}

// TestServeControlAllowRemote: -controlAllowRemote lets the control
// endpoint listen on every address.
func TestServeControlAllowRemote(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"-addr", "127.0.0.1:0", "-control", "0.0.0.0:0", "-controlAllowRemote"}, w, io.Discard)
		w.Close()
	}()
	lines := bufio.NewScanner(r)
	var out []string
	for len(out) < 2 && lines.Scan() {
		out = append(out, lines.Text())
	}
	go io.Copy(io.Discard, r)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve -control 0.0.0.0:0 -controlAllowRemote: %v", err)
	}
	if len(out) != 2 {
		t.Fatalf("output %q, want the address and the control URL", out)
	}
	host, _, err := net.SplitHostPort(strings.TrimPrefix(out[1], "control on http://"))
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsUnspecified() {
		t.Fatalf("second line %q, want the control URL on every address (0.0.0.0 or [::])", out[1])
	}
}
