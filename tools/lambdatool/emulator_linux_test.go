package lambdatool_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"
)

// rieCommand is the emulator's binary, which the Makefile installs.
const rieCommand = "aws-lambda-rie"

// emulatorFunction is the only function name the emulator answers to.
const emulatorFunction = "function"

// handler is the test handler's binary, built once for all the tests.
var handler struct {
	once sync.Once
	path string
	err  error
	dir  string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if handler.dir != "" {
		os.RemoveAll(handler.dir)
	}
	os.Exit(code)
}

// findEmulator looks for aws-lambda-rie in PATH and in $(go env GOPATH)/bin,
// where make test installs it, and skips the test without it.
func findEmulator(t *testing.T) string {
	t.Helper()
	if path, err := exec.LookPath(rieCommand); err == nil {
		return path
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
			path := filepath.Join(dir, "bin", rieCommand)
			if _, err := os.Stat(path); err == nil {
				return path
			}
		}
	}
	t.Skipf("%s is not in PATH or $(go env GOPATH)/bin: run make test, which installs it, to run this test", rieCommand)
	return ""
}

// buildHandler builds testdata/handler, a function made with aws-lambda-go.
func buildHandler(t *testing.T) string {
	t.Helper()
	handler.once.Do(func() {
		handler.dir, handler.err = os.MkdirTemp("", "lambdatool-handler-")
		if handler.err != nil {
			return
		}
		handler.path = filepath.Join(handler.dir, "bootstrap")
		cmd := exec.Command("go", "build", "-o", handler.path, ".")
		cmd.Dir = filepath.Join("testdata", "handler")
		cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			handler.err = fmt.Errorf("go build testdata/handler: %v\n%s", err, out)
		}
	})
	require.NoError(t, handler.err)
	return handler.path
}

// emulator is an aws-lambda-rie process on loopback running the test
// handler, one invocation at a time.
type emulator struct {
	URL string
}

// startEmulator runs the handler in an emulator of its own, with env as the
// whole environment of the emulator and the function (which gets the
// emulator's). It is stopped, with the function, when the test ends.
func startEmulator(t *testing.T, env ...string) *emulator {
	t.Helper()
	rie := findEmulator(t)
	bootstrap := buildHandler(t)
	ports := freePorts(t, 2)
	api, rapi := ports[0], ports[1]
	// A file, not a pipe: the function, which the emulator starts in a
	// process group of its own, must not keep the test waiting on the pipe.
	log, err := os.Create(filepath.Join(t.TempDir(), "emulator.log"))
	require.NoError(t, err)
	cmd := exec.Command(rie, "--log-level", "error",
		"--runtime-interface-emulator-address", api,
		"--runtime-api-address", rapi,
		bootstrap)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	output := func() string {
		b, _ := os.ReadFile(log.Name())
		return string(b)
	}
	t.Cleanup(func() {
		killChildren(cmd.Process.Pid)
		_ = cmd.Process.Kill()
		<-exited
		log.Close()
		if t.Failed() {
			t.Logf("emulator output:\n%s", output())
		}
	})
	// Wait until it listens; it exits at once if it cannot.
	for {
		c, err := net.Dial("tcp", api)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			require.FailNow(t, "the emulator exited before listening on "+api, output())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return &emulator{URL: "http://" + api}
}

// freePorts are n distinct loopback addresses no one listened on a moment
// ago: all are held until all are found, so that none is handed out twice.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs
}

// client is a real Lambda client aimed at the emulator.
func (e *emulator) client() *lambda.Client { return newClient(e.URL) }

// killChildren kills the processes the emulator started, the function: each
// in its own process group, with what it started.
func killChildren(pid int) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(task)
		for _, f := range strings.Fields(string(b)) {
			child, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			if pgid, err := syscall.Getpgid(child); err == nil && pgid == child {
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
			_ = syscall.Kill(child, syscall.SIGKILL)
		}
	}
}
