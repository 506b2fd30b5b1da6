package sandbox

import (
	"path/filepath"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/codec"
)

// FileStore is a Store in the directory dir, for toolgate dev and workers sharing one file
// system: objects in dir/objects (a blobs.FileStore, sealed with keys when keys is not nil),
// heads in dir/heads (FileHeads). Keep dir apart from the part store: its sweep by age would
// take a workspace's objects.
func FileStore(dir string, keys codec.KeySource) Store {
	var objects blobs.Store = &blobs.FileStore{Dir: filepath.Join(dir, "objects")}
	if keys != nil {
		objects = &blobs.Sealed{Store: objects, Keys: keys}
	}
	return Store{Objects: objects, Heads: &FileHeads{Dir: filepath.Join(dir, "heads")}}
}
