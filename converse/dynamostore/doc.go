// Package dynamostore is a converse.Store on Amazon DynamoDB, for services
// whose conversations move between instances, containers or Lambda
// invocations. It keeps one item a session, and the history in segment
// items, so that a save writes its step, not the history. Each save is a
// conditional write on the session's revision, so two writers of one
// session never lose each other's steps: the second fails with
// converse.ErrSessionChanged.
// A session that outgrows DynamoDB's 400 KB item limit goes to Amazon S3.
//
// A [Store] is a converse.Session's Store:
//
//	store := dynamostore.New(dynamodb.NewFromConfig(cfg), "sessions", func(o *dynamostore.Options) {
//		o.S3, o.Bucket = s3.NewFromConfig(cfg), "my-bucket"
//	})
//	c := converse.New(client, modelID, reg, func(o *converse.Options) {
//		o.Session = &converse.Session{Store: store, ID: "user-42"}
//	})
//
// The key names, a key prefix, a time to live and gzip are [Options]. The
// tests of code using it run on package dynamotest: dynalite and gofakes3
// on loopback, through the real SDK clients.
//
// # Item layout
//
// The table is the caller's; its partition key (Options.PartitionKey,
// "id" by default) holds Options.KeyPrefix and the session id, and its sort
// key, if it has one (Options.SortKey), the string "session". The
// session's item holds the state but its history, and lists the segments
// that hold the history:
//
//	revision  N  the session's revision, 1 at the first save, one more at each
//	state     B  the state's JSON form (converse.State) without "messages",
//	             gzipped if encoding says so
//	encoding  S  "json" or "gzip"
//	segments  L  the history's segments, in order, each a map: id S (the
//	             segment's key suffix), messages N (how many it holds),
//	             expires N (its time to live, with Options.TTL), and bucket
//	             S and key S if its messages are in S3
//	writer    S  a random token of the save that wrote it, which a save on
//	             top of the state it loaded or saved requires
//	bucket    S  with key, instead of state: the S3 object that holds it
//	key       S
//	TTL       N  (Options.TTLAttribute, with Options.TTL) the Unix time, in
//	             seconds, after which the session is absent
//	holder    S  while a run holds the session (see Hold): host/pid/token
//	heldUntil N  with holder: the Unix time, in milliseconds, when its lease
//	             ends unless renewed
//
// A segment is an item of its own. Its partition key is the session's
// followed by "#segment#" and the segment's id, or with a sort key, the
// session's, its sort key "segment#" and the id. The id is the revision,
// "-" and the writer token of the save that wrote it, so that a writer whose save
// loses to another's can never overwrite a segment the winner's item lists.
// Its attributes:
//
//	messages  B  a JSON array of messages of the history (State's JSON
//	             form's), gzipped if encoding says so
//	encoding  S  "json" or "gzip"
//	bucket    S  with key, instead of messages: the S3 object holding them
//	key       S
//	TTL       N  with Options.TTL: twice the TTL after the save that wrote it
//
// A save whose history extends the one it loaded or last saved (the same
// messages first) writes one segment of the new messages, then the
// session's item: its cost follows the step, not the history. Any other
// save writes the whole history as one segment: a new session, a trimmed
// or rewritten history, an item of the previous layout. So does one that
// would list more than 32 segments, or a segment expiring within Options.TTL,
// so that no segment expires under a live session. A Load reads the item,
// then its segments in one BatchGetItem. The item's state keeps the turn
// records (State.Turns), some hundred bytes an assistant message, which
// each save writes whole.
//
// Versions of this package before segments wrote the whole state, messages
// included, in state, with no segments attribute. Load reads such an item;
// the next save over it writes the layout above. Those versions read an
// item of this layout as a state without history: do not go back to them.
//
// Store is a converse.Holder. A Send, Resume or Stop writes a lease of
// Options.Lease (30 s by default) to the item. The lease is renewed every
// third of it and by each save, and removed when the run ends. Another run
// fails at once with converse.ErrSessionLocked, naming the holder and the
// lease's end, until the lease ends unrenewed (its holder crashed); a holder
// that lost its lease so can no longer save. An item holding a lease and no
// revision is a session being made, absent to Load. Versions of this package
// before leases neither honour nor keep them.
//
// A save writes its segment, then the item. A crash between the two leaves
// the previous item, which lists the previous segments. Segments an item
// no longer lists are deleted once it is written, unless the answer to the
// write was lost. A save whose item write failed deletes its own segment. A crash can so leave a segment no item
// lists. With Options.TTL it expires; without, it stays, and a scan for
// keys with "#segment#" (or sort keys "segment#") whose id no item lists
// finds it.
//
// An item or segment larger than 400 KB is written to S3 first, then the
// item pointing at it. The object's key is its own: Options.Prefix, the
// escaped partition key, "/", the revision and a random suffix. The
// object is deleted once no item points at it. A crash can so leave an
// object no item points at; an S3 lifecycle rule on the prefix removes
// them.
//
// DynamoDB removes an expired item some time after it expires, if the
// table's time to live is enabled on Options.TTLAttribute (aws dynamodb
// update-time-to-live). Until then Load treats it as absent. A new session
// saved over it takes the revision after its, as revisions of an id never
// restart. A writer that loaded the expired one then fails with
// converse.ErrSessionChanged instead of saving over the new one. The
// expired session's segments expire at most Options.TTL after it.
//
// # Permissions
//
// The store needs dynamodb:GetItem, dynamodb:PutItem, dynamodb:UpdateItem,
// dynamodb:DeleteItem, dynamodb:BatchGetItem and dynamodb:BatchWriteItem
// on the table. With offload it needs s3:GetObject,
// s3:PutObject and s3:DeleteObject on the prefix, and s3:ListBucket on the
// bucket. Without s3:ListBucket, S3 answers a read of a missing object with
// 403 AccessDenied instead of NoSuchKey. A Load that meets an object a
// newer save just replaced then fails instead of reading again.
package dynamostore
