// Package ownedpath checks the files and directories a daemon keeps its
// state in before it trusts them: owned by the daemon's user or by root,
// writable by no one else, and, for a file, neither a symbolic link nor a
// hard link to another name. A local user who created the directory
// first, or planted a link or a file in it, is refused with an error that
// names the path and the command that fixes it.
package ownedpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"github.com/asrpt/asrpt/internal/regularfile"
)

// ErrUntrusted is returned (wrapped) for a path another user could have
// put there or can change.
var ErrUntrusted = errors.New("not trusted")

// CheckDir checks the directory dir (a symbolic link to it is followed:
// the directory it reaches is checked): a directory, owned by this
// process's user or root, not writable by its group or by every user.
func CheckDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("directory %s: %w (create it: %s)", dir, err, InstallDir(dir))
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %w: not a directory (%s)", dir, ErrUntrusted, st.Mode().Type())
	}
	if err := owned(st); err != nil {
		return fmt.Errorf("directory %s: %w: %w (recreate it: %s)", dir, ErrUntrusted, err, InstallDir(dir))
	}
	if m := st.Mode().Perm(); m&0o022 != 0 {
		return fmt.Errorf("directory %s: %w: writable by other users (mode %04o): chmod go-w %s, or recreate it: %s",
			dir, ErrUntrusted, m, dir, InstallDir(dir))
	}
	return nil
}

// CheckFile checks the file at path, which need not exist (an error
// wrapping fs.ErrNotExist then): not a symbolic link, a regular file
// (regularfile.ErrNotRegular), with one name, owned by this process's
// user or root and not writable by its group or by every user.
func CheckFile(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	return checkFile(path, st)
}

// OpenFile opens path as os.OpenFile does, flag with O_NOFOLLOW (a
// symbolic link in the last component is refused, never followed) and
// O_NONBLOCK (a FIFO planted there does not block the open), and checks
// the open file as CheckFile says; a file it creates is created with
// perm. A refused file is closed and not changed (O_TRUNC truncates only
// after the checks).
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag&^os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, perm)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: %w: a symbolic link (remove it; the file is never followed)", path, ErrUntrusted)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = checkFile(path, st)
	}
	if err == nil && flag&os.O_TRUNC != 0 {
		err = f.Truncate(0)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func checkFile(path string, st os.FileInfo) error {
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s: %w: a symbolic link (remove it; the file is never followed)", path, ErrUntrusted)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s: %w (%s)", path, regularfile.ErrNotRegular, st.Mode().Type())
	}
	if err := owned(st); err != nil {
		return fmt.Errorf("%s: %w: %w (remove it)", path, ErrUntrusted, err)
	}
	if m := st.Mode().Perm(); m&0o022 != 0 {
		return fmt.Errorf("%s: %w: writable by other users (mode %04o): chmod go-w %s", path, ErrUntrusted, m, path)
	}
	if s, ok := st.Sys().(*syscall.Stat_t); ok && s.Nlink > 1 {
		return fmt.Errorf("%s: %w: %d hard links, another name reaches it (remove it)", path, ErrUntrusted, s.Nlink)
	}
	return nil
}

// owned says who owns st when it is neither this process's user nor root.
func owned(st os.FileInfo) error {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := int(s.Uid); uid != 0 && uid != os.Getuid() {
		return fmt.Errorf("owned by %s, neither root nor this process's user %s", userName(uid), userName(os.Getuid()))
	}
	return nil
}

// InstallDir returns the command that creates dir for this process's
// user: install -d -m 0750 -o USER -g GROUP DIR.
func InstallDir(dir string) string {
	u, g := userName(os.Getuid()), strconv.Itoa(os.Getgid())
	if gr, err := user.LookupGroupId(g); err == nil {
		g = gr.Name
	}
	return fmt.Sprintf("install -d -m 0750 -o %s -g %s %s", u, g, dir)
}

// userName returns the name of uid, or the number.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}
