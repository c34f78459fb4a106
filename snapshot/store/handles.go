package store

// The handles: a Store is opened once and closed once, and its objects
// are reached through small handles, one per kind of object, as
// litestream's ReplicaClient and restic's backend.Backend keep a few
// methods each. A handle is a value that holds only its Store: make one
// where it is needed (st.Snapshots().List(ctx)); it is as safe for
// concurrent use as the Store, and it is valid until the Store is closed.

// Snapshots are the snapshot objects, snapshots/ID.snap.
//
// Not found: GetWith and Verify of an ID that is not stored, and Resolve
// of a ref that names none, are snapshot.ErrNotFound in an error naming
// the store; Delete of a missing snapshot is ErrNotFound too; List of an
// empty store is an empty list.
type Snapshots struct {
	s *Store
	// connectors limit "latest" (see For).
	connectors []string
}

// For returns the handle of a command limited to connectors (show, diff,
// restore --connector): its Resolve and GetWith resolve "latest" to the
// newest snapshot that holds them all (see ResolveFor). Nil connectors:
// every snapshot, as Snapshots.
func (h Snapshots) For(connectors []string) Snapshots {
	h.connectors = connectors
	return h
}

// Journal is the journal: epochs, segments and flush marks under
// journal/ (docs/journal.md).
//
// Not found: GetEpoch of a missing epoch is journal.ErrNotFound naming
// it; ReadSegment of a segment deleted since it was listed is
// journal.ErrJournalBroken; DeleteObject of a missing object is not an
// error; List, Coverage and Events of a store without a journal are
// empty; StateAt a time no journal or snapshot covers is
// journal.ErrNotRestorable naming what is covered.
type Journal struct{ s *Store }

// Levels compact the journal's segments into its merged levels (1: one a
// minute, 2: one an hour) and thin the raw ones (docs/journal.md).
//
// Not found: an epoch with nothing to compact, drop or thin is no error
// and zero objects.
type Levels struct{ s *Store }

// Pins are the pins that keep snapshots from retention, pins/ID.json.
//
// Not found: Pin of a ref that names no snapshot is snapshot.ErrNotFound
// and writes nothing; Unpin of a snapshot that is not pinned is
// ErrNotPinned; Pinned of one is false; All of a store without pins is an
// empty map.
type Pins struct{ s *Store }

// Drills are the records of restore drills, drills/ID.json.
//
// Not found: Get of a missing record is snapshot.ErrNotFound; List of a
// store without drills is empty.
type Drills struct{ s *Store }

// Restores are the records of unfinished restores (restore intents),
// restores/ID.json.
//
// Not found: Delete of a missing record is not an error; List of a store
// without records is empty.
type Restores struct{ s *Store }

// Fences are the standby fences, standby/fence-CLUSTER.json: a failover
// stores one so that the daemon of the cluster it failed over from never
// writes to the standby again. Beside them, standby/configs-CLUSTER.json
// records which connector configs that cluster's daemon wrote to its
// standby (PutConfigs, GetConfigs).
//
// Not found: Get of a missing fence, and GetConfigs of a missing record,
// are snapshot.ErrNotFound; Delete of one is not an error.
type Fences struct{ s *Store }

// Snapshots returns the handle of the Store's snapshots.
func (s *Store) Snapshots() Snapshots { return Snapshots{s: s} }

// Journal returns the handle of the Store's journal.
func (s *Store) Journal() Journal { return Journal{s} }

// Levels returns the handle that compacts the Store's journal.
func (s *Store) Levels() Levels { return Levels{s} }

// Pins returns the handle of the Store's pins.
func (s *Store) Pins() Pins { return Pins{s} }

// Drills returns the handle of the Store's drill records.
func (s *Store) Drills() Drills { return Drills{s} }

// Restores returns the handle of the Store's restore records.
func (s *Store) Restores() Restores { return Restores{s} }

// Fences returns the handle of the Store's standby fences.
func (s *Store) Fences() Fences { return Fences{s} }
