// Package atomicfile writes a whole file or none: through a temporary file
// in the same directory, fsynced, renamed over the path, and the directory
// fsynced, so a reader (or a crash) sees the old file or the new one,
// never a part. Safe for concurrent use on different paths.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write calls write with the temporary file and, if it succeeds, puts the
// file in place of path; on any error the temporary file is removed and
// path is left as it was. Errors name the path.
func Write(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil { // the rename, durable
		_ = d.Sync()
		d.Close()
	}
	return nil
}
