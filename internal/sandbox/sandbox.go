// Package sandbox holds a process and everything it starts to a context's
// declared sandbox (contract.Sandbox) with Landlock, the Linux security
// module an unprivileged process applies to itself (docs/security.md,
// "Sandbox"). `loadout sandbox` applies it and execs the command; the
// agents' integrations run their shell commands through that.
//
// It fails closed: where the running kernel cannot enforce every right the
// declaration withholds, Restrict returns an *UnenforceableError and
// restricts nothing, never a best-effort subset. Only hostd-free binaries
// import it: the sandbox lives in the CLI, not in hostd.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/loadout-dev/loadout/internal/contract"
)

// Landlock rights of each declared right. Rights the declaration cannot
// name (making character and block devices) are handled and never granted.
var rights = map[string]landlock.AccessFSSet{
	contract.AccessRead:    ll.AccessFSReadFile | ll.AccessFSReadDir,
	contract.AccessWrite:   ll.AccessFSWriteFile | ll.AccessFSTruncate,
	contract.AccessCreate:  ll.AccessFSMakeReg | ll.AccessFSMakeDir | ll.AccessFSMakeSym | ll.AccessFSMakeSock | ll.AccessFSMakeFifo,
	contract.AccessRemove:  ll.AccessFSRemoveFile | ll.AccessFSRemoveDir,
	contract.AccessExecute: ll.AccessFSExecute,
}

// handledFS is every filesystem right the sandbox restricts. Refer (moving
// or linking a file to another directory) is granted where both create and
// remove are: a move is a create there and a remove here. IoctlDev (V5)
// and ResolveUnix (V9) are left unhandled: the declaration has no word for
// them, and a terminal's ioctls must keep working.
const handledFS = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSReadDir |
	ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg |
	ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate

// fileRights are the rights Landlock accepts on a path that is not a
// directory.
const fileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate

// Devices every sandboxed command may read and write, whatever the
// declaration: without /dev/null nearly nothing runs, and none of them
// reaches a file.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// Minimum Landlock ABI versions: V3 restricts truncation (without it a
// file the declaration does not let the agent write could still be
// emptied), V4 restricts TCP connect.
const (
	abiFilesystem = 3
	abiNetwork    = 4
)

// UnenforceableError says why the running kernel cannot hold a process to
// the declared sandbox. Nothing was restricted.
type UnenforceableError struct{ Reason string }

func (e *UnenforceableError) Error() string {
	return "the sandbox cannot be enforced: " + e.Reason
}

// ABI returns the running kernel's Landlock ABI version, 0 when Landlock is
// unavailable (not built in, not enabled at boot, or refused by a seccomp
// profile).
func ABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// Check reports whether a kernel with Landlock ABI abi can enforce s: nil,
// or an *UnenforceableError naming what cannot be held.
func Check(s *contract.Sandbox, abi int) error {
	if s == nil {
		return nil
	}
	if s.Filesystem != nil && abi < abiFilesystem {
		return &UnenforceableError{Reason: fmt.Sprintf("filesystem rights need Landlock ABI %d or later (file truncation); this kernel offers %s", abiFilesystem, abiName(abi))}
	}
	if s.Network != nil && abi < abiNetwork {
		return &UnenforceableError{Reason: fmt.Sprintf("network egress by port needs Landlock ABI %d or later (TCP connect); this kernel offers %s", abiNetwork, abiName(abi))}
	}
	return nil
}

func abiName(abi int) string {
	if abi <= 0 {
		return "no Landlock (not built in, not enabled at boot, or blocked by seccomp)"
	}
	return fmt.Sprintf("ABI %d", abi)
}

// config is the Landlock configuration and rules of s.
func config(s *contract.Sandbox) (landlock.Config, []landlock.Rule, error) {
	var cfg landlock.Config
	var rules []landlock.Rule
	if fs := s.Filesystem; fs != nil {
		cfg.HandledAccessFS = handledFS
		for _, p := range fs.Paths {
			var acc landlock.AccessFSSet
			for _, r := range p.Access {
				a, ok := rights[r]
				if !ok {
					return cfg, nil, fmt.Errorf("path %s: unknown right %q", p.Path, r)
				}
				acc |= a
			}
			if acc&rights[contract.AccessCreate] != 0 && acc&rights[contract.AccessRemove] != 0 {
				acc |= ll.AccessFSRefer
			}
			fi, err := os.Stat(p.Path)
			switch {
			case errors.Is(err, os.ErrNotExist):
				continue // a path that does not exist grants nothing
			case err != nil:
				return cfg, nil, fmt.Errorf("path %s: %w", p.Path, err)
			case !fi.IsDir():
				acc &= fileRights
			}
			if acc != 0 {
				rules = append(rules, landlock.PathAccess(acc, p.Path))
			}
		}
		for _, d := range devices {
			rules = append(rules, landlock.PathAccess(ll.AccessFSReadFile|ll.AccessFSWriteFile|ll.AccessFSTruncate, d).IgnoreIfMissing())
		}
	}
	if n := s.Network; n != nil {
		cfg.HandledAccessNet = ll.AccessNetConnectTCP
		for _, p := range n.ConnectPorts {
			if p < 1 || p > 65535 {
				return cfg, nil, fmt.Errorf("port %d out of range", p)
			}
			rules = append(rules, landlock.ConnectTCP(uint16(p)))
		}
	}
	return cfg, rules, nil
}

// Restrict holds the calling process (every thread) and everything it will
// start to s, for good. A nil s restricts nothing. Where the kernel cannot
// enforce s it returns an *UnenforceableError and restricts nothing.
func Restrict(s *contract.Sandbox) error {
	if s == nil || (s.Filesystem == nil && s.Network == nil) {
		return nil
	}
	if err := Check(s, ABI()); err != nil {
		return err
	}
	cfg, rules, err := config(s)
	if err != nil {
		return err
	}
	// Not BestEffort: a kernel that lacks a handled right fails here,
	// rather than running with less than was declared.
	if err := cfg.Restrict(rules...); err != nil {
		return &UnenforceableError{Reason: err.Error()}
	}
	return nil
}

// Exec restricts the process to s and replaces it with argv (looked up in
// PATH), so the command and everything it starts run under the sandbox.
// It returns only on failure, having exec'd nothing.
func Exec(s *contract.Sandbox, argv, env []string) error {
	if len(argv) == 0 {
		return errors.New("no command to run")
	}
	// Look the command up before restricting: the lookup's answer does
	// not change, and a clear "not found" beats a Landlock EACCES.
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	if err := Restrict(s); err != nil {
		return err
	}
	if err := syscall.Exec(path, argv, env); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil
}
