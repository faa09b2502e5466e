package clients_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeSection is the README section whose snippets TestReadmeSnippets runs.
const readmeSection = "## Use zksim from any language"

// readmeAddr is the address the snippets connect to, as written; the test
// replaces it with the backend's.
const readmeAddr = "127.0.0.1:2181"

var fence = regexp.MustCompile("(?ms)^```(\\w+)\\n(.*?)^```$")

// readmeSnippets returns the fenced code blocks of the README section, by
// language tag, failing the test unless each tag appears once.
func readmeSnippets(t *testing.T) map[string]string {
	t.Helper()
	src, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(src), "\n"+readmeSection+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", readmeSection)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := map[string]string{}
	for _, m := range fence.FindAllStringSubmatch(section, -1) {
		if _, dup := blocks[m[1]]; dup {
			t.Fatalf("README %q: two %s blocks", readmeSection, m[1])
		}
		blocks[m[1]] = m[2]
	}
	for _, lang := range []string{"sh", "go", "python", "java"} {
		if blocks[lang] == "" {
			t.Fatalf("README %q: no %s block", readmeSection, lang)
		}
	}
	return blocks
}

// TestReadmeStart checks the two lines that start the README section.
func TestReadmeStart(t *testing.T) {
	want := "go install github.com/zksim/zksim/cmd/zksim@latest\nzksim serve\n"
	if got := readmeSnippets(t)["sh"]; got != want {
		t.Fatalf("README %q starts with\n%s\nwant\n%s", readmeSection, got, want)
	}
}

// snippet returns the README's snippet in lang with the server address
// replaced by the backend's.
func snippet(t *testing.T, blocks map[string]string, lang string, b backend) string {
	t.Helper()
	code := blocks[lang]
	if n := strings.Count(code, readmeAddr); n != 1 {
		t.Fatalf("README %s snippet names %s %d times, want once", lang, readmeAddr, n)
	}
	return strings.Replace(code, readmeAddr, b.addr, 1)
}

// TestReadmeSnippets runs the README's go-zookeeper, kazoo and Curator
// snippets as written, each in its own process, only the server address
// changed, and checks each prints its greeting.
func TestReadmeSnippets(t *testing.T) {
	blocks := readmeSnippets(t)
	forEachBackend(t, func(t *testing.T, b backend) {
		t.Run("go-zookeeper", func(t *testing.T) {
			goTool, err := exec.LookPath("go")
			need(t, "the go command", err)
			dir := t.TempDir()
			write(t, dir, "main.go", snippet(t, blocks, "go", b))
			write(t, dir, "go.mod", "module snippet\n\ngo 1.26\n\nrequire github.com/go-zookeeper/zk v1.0.4\n")
			write(t, dir, "go.sum", goSumLines(t, "github.com/go-zookeeper/zk v1.0.4"))
			b.extraEnv = []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off"}
			r := run(t, b, dir, goTool, "run", ".")
			if r.code != 0 || strings.TrimSpace(r.stdout) != "from Go" {
				t.Fatalf("go-zookeeper snippet: want exit 0 and \"from Go\":\n%s", r)
			}
		})
		t.Run("kazoo", func(t *testing.T) {
			needKazoo(t)
			dir := t.TempDir()
			write(t, dir, "hello.py", snippet(t, blocks, "python", b))
			r := run(t, b, dir, python, "hello.py")
			if r.code != 0 || strings.TrimSpace(r.stdout) != "from Python" {
				t.Fatalf("kazoo snippet: want exit 0 and \"from Python\":\n%s", r)
			}
		})
		t.Run("curator", func(t *testing.T) {
			needJDK(t)
			dir := t.TempDir()
			write(t, dir, "Hello.java", snippet(t, blocks, "java", b))
			// The README's commands: the jar's manifest names the rest.
			jar := filepath.Join(debianJava, "curator-recipes.jar")
			if r := run(t, b, dir, "javac", "-cp", jar, "Hello.java"); r.code != 0 {
				t.Fatalf("javac the Curator snippet:\n%s", r)
			}
			r := run(t, b, dir, "java", "-cp", jar+string(os.PathListSeparator)+".", "Hello")
			if r.code != 0 || strings.TrimSpace(r.stdout) != "from Java" {
				t.Fatalf("Curator snippet: want exit 0 and \"from Java\":\n%s", r)
			}
		})
	})
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goSumLines returns the lines of the repository's go.sum for a module
// version, so the snippet builds offline from the module cache.
func goSumLines(t *testing.T, modVersion string) string {
	t.Helper()
	f, err := os.Open("../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), modVersion+" ") || strings.HasPrefix(sc.Text(), modVersion+"/go.mod ") {
			b.WriteString(sc.Text() + "\n")
		}
	}
	if b.Len() == 0 {
		t.Fatalf("go.sum has no lines for %s", modVersion)
	}
	return b.String()
}
