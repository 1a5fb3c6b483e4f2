//go:build unix

package db

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on path and writes the holder record
// into it.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			h, _ := fileHolder(path)
			if h == nil {
				h = &ImportHolder{}
			}
			return nil, &ImportRunningError{Holder: *h}
		}
		return nil, err
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(holderRecord()+"\n"), 0) //nolint:errcheck // the record only makes the message better
	}
	return func() { f.Close() }, nil // closing releases the flock
}

// fileHolder reads the holder of path's flock, or returns nil when none
// holds it (or there is no lock file).
func fileHolder(path string) (*ImportHolder, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		return nil, nil // closing releases it
	} else if !errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, err
	}
	b := make([]byte, 128)
	n, _ := f.ReadAt(b, 0)
	h := parseHolder(string(b[:n]))
	return &h, nil
}
