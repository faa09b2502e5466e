package zkserver

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// installHint tells a developer how to get a ZooKeeper the tests can use.
const installHint = "install ZooKeeper 3.8 and Java with `sudo apt-get install zookeeper` " +
	"(Debian/Ubuntu; .ci/install-zookeeper.sh does it), or point ZKSIM_JAVA and " +
	"ZKSIM_ZOOKEEPER_CLASSPATH at a java binary and a ZooKeeper classpath"

// debianJar is where the Debian zookeeper package puts the server jar. Its
// manifest's Class-Path names every dependency under /usr/share/java.
const debianJar = "/usr/share/java/zookeeper.jar"

// debianLogBinding is the SLF4J binding (from libslf4j-java, a dependency of
// the zookeeper package) that makes the server log to stderr. Without a
// binding the server runs silently.
const debianLogBinding = "/usr/share/java/slf4j-simple.jar"

// errNotInstalled marks the errors that mean "ZooKeeper or java is missing",
// as opposed to an installed server that failed to start.
var errNotInstalled = errors.New("zookeeper is not installed")

// installation is what it takes to launch a ZooKeeper JVM.
type installation struct {
	java      string
	classpath string
}

// findInstallation locates java and the ZooKeeper classpath. The error
// wraps errNotInstalled when something is missing.
func findInstallation() (installation, error) {
	java, err := findJava()
	if err != nil {
		return installation{}, err
	}
	classpath, err := findClasspath()
	if err != nil {
		return installation{}, err
	}
	return installation{java: java, classpath: classpath}, nil
}

func findJava() (string, error) {
	if java := os.Getenv("ZKSIM_JAVA"); java != "" {
		if _, err := os.Stat(java); err != nil {
			return "", fmt.Errorf("%w: ZKSIM_JAVA=%s: %v", errNotInstalled, java, err)
		}
		return java, nil
	}
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java := filepath.Join(home, "bin", "java")
		if _, err := os.Stat(java); err == nil {
			return java, nil
		}
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w: no java on PATH", errNotInstalled)
	}
	return java, nil
}

func findClasspath() (string, error) {
	if cp := os.Getenv("ZKSIM_ZOOKEEPER_CLASSPATH"); cp != "" {
		return cp, nil
	}
	if _, err := os.Stat(debianJar); err != nil {
		return "", fmt.Errorf("%w: %s not found", errNotInstalled, debianJar)
	}
	parts := []string{debianJar}
	if _, err := os.Stat(debianLogBinding); err == nil {
		parts = append(parts, debianLogBinding)
	}
	return strings.Join(parts, string(os.PathListSeparator)), nil
}

// underCI reports whether the real-server tests are required (CI=true).
func underCI() bool { return os.Getenv("CI") == "true" }

// unavailable ends a test that cannot get a server: a skip with the install
// hint when ZooKeeper is missing outside CI, a failure otherwise.
func unavailable(t testing.TB, err error) {
	t.Helper()
	switch {
	case errors.Is(err, errNotInstalled) && underCI():
		t.Fatalf("zkserver: %v. CI=true requires the real-server tests to run: %s", err, installHint)
	case errors.Is(err, errNotInstalled):
		t.Skipf("zkserver: skipping the real-ZooKeeper test: %v; %s", err, installHint)
	default:
		t.Fatalf("zkserver: %v", err)
	}
}
