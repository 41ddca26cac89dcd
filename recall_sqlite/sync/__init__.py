"""More than one machine: Litestream moves the bytes, a merge by content converges.

sync.py       Sync (`store.sync`): init, run, pull, status, restore, peek, verify, retire
key.py        the sync key: the same on every clone of a repository
place.py      `<db>-sync/`: the one private directory beside a store, the names in it
state.py      what is kept there: config, this machine's id, Litestream's local state
remote.py     where replicas live: a location (file, S3, SFTP) parsed into its backend
remote_base.py  the backends' base: machines, owner.json, how far a replica has got
remote_file.py remote_s3.py remote_sftp.py  one backend each
owner.py      the one-writer claim on a machine's replica (`owner.json`)
litestream.py  the engine: binary, environment, generated configs, restore, replicate
orphan.py     Litestream never outlives its `sync run`; one left behind is found and stopped
merge.py merge_summaries.py merge_vectors.py  another store merged in, by content
merge_rows.py  a pull's new entry versions written: row by row when few, bulk.py when many
peer_rows.py  a peer's rows checked against what their ids prove; who asked for each removal
peers.py      what this machine knows of the others (`peers.json`, never in the store)
pull.py       restore each peer, merge it, scrub what it removed
pause.py      holding Litestream still for a checkpoint (forget, pulled forgets)
setup.py      `sync init` and `sync restore`
run.py        `sync run`: replicate, pull, keep the claim
watch.py      the peers' replica positions read often: a move starts a pull
status.py     `sync status`: this machine's replication and every peer
peek.py       `sync peek`: a peer's newest entries from its replica (Litestream's VFS)
compare.py    `sync verify`: this store and each peer's replica compared, nothing merged
retire.py     `sync retire`: a machine gone for good pulled, its replica deleted, forgotten
"""
