package zkserver

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// recordingTB records how a test would have ended.
type recordingTB struct {
	testing.TB
	skipped, fatal string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
}

func TestMissingZooKeeperSkipsOutsideCI(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("ZKSIM_JAVA", "/nonexistent/java")
	_, err := findInstallation()
	if !errors.Is(err, errNotInstalled) {
		t.Fatalf("findInstallation with a missing java: %v", err)
	}
	var r recordingTB
	unavailable(&r, err)
	if r.fatal != "" || !strings.Contains(r.skipped, "apt-get install zookeeper") {
		t.Fatalf("skip %q, fatal %q; want a skip saying how to install", r.skipped, r.fatal)
	}
}

func TestMissingZooKeeperFailsUnderCI(t *testing.T) {
	t.Setenv("CI", "true")
	t.Setenv("ZKSIM_JAVA", "")
	t.Setenv("ZKSIM_ZOOKEEPER_CLASSPATH", "")
	var r recordingTB
	unavailable(&r, fmt.Errorf("%w: /usr/share/java/zookeeper.jar not found", errNotInstalled))
	if r.skipped != "" || !strings.Contains(r.fatal, "CI=true") || !strings.Contains(r.fatal, "apt-get install zookeeper") {
		t.Fatalf("skip %q, fatal %q; want a failure under CI", r.skipped, r.fatal)
	}
}

func TestStartFailureAlwaysFails(t *testing.T) {
	t.Setenv("CI", "")
	var r recordingTB
	unavailable(&r, errors.New("zkserver: the server exited before serving"))
	if r.skipped != "" || r.fatal == "" {
		t.Fatalf("skip %q, fatal %q; want a failure", r.skipped, r.fatal)
	}
}
