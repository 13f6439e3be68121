// Package dynamostore is a converse.Store on Amazon DynamoDB, for services
// whose conversations move between instances, containers or Lambda
// invocations. It keeps one item a session. Each save is a conditional
// write on the session's revision, so two writers of one session never
// lose each other's steps: the second fails with converse.ErrSessionChanged.
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
// key, if it has one (Options.SortKey), the string "session". The other
// attributes:
//
//	revision  N  the session's revision, 1 at the first save, one more at each
//	state     B  the state's JSON form (converse.State), gzipped if encoding says so
//	encoding  S  "json" or "gzip"
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
// Store is a converse.Holder. A Send, Resume or Stop writes a lease of
// Options.Lease (30 s by default) to the item. The lease is renewed every
// third of it and by each save, and removed when the run ends. Another run
// fails at once with converse.ErrSessionLocked, naming the holder and the
// lease's end, until the lease ends unrenewed (its holder crashed); a holder
// that lost its lease so can no longer save. An item holding a lease and no
// revision is a session being made, absent to Load. Versions of this package
// before leases neither honour nor keep them.
//
// An item larger than 400 KB is written to S3 first, then the item pointing
// at it. The object's key is its own: Options.Prefix, the escaped partition
// key, "/", the revision and a random suffix. A crash between the two
// leaves the previous item, pointing at the previous object. That object is
// deleted once the new item is written. A crash can so leave an object no
// item points at; an S3 lifecycle rule on the prefix removes them.
//
// DynamoDB removes an expired item some time after it expires, if the
// table's time to live is enabled on Options.TTLAttribute (aws dynamodb
// update-time-to-live). Until then Load treats it as absent. A new session
// saved over it takes the revision after its, as revisions of an id never
// restart. A writer that loaded the expired one then fails with
// converse.ErrSessionChanged instead of saving over the new one.
//
// # Permissions
//
// The store needs dynamodb:GetItem, dynamodb:PutItem, dynamodb:UpdateItem
// and dynamodb:DeleteItem on the table. With offload it needs s3:GetObject,
// s3:PutObject and s3:DeleteObject on the prefix, and s3:ListBucket on the
// bucket. Without s3:ListBucket, S3 answers a read of a missing object with
// 403 AccessDenied instead of NoSuchKey. A Load that meets an object a
// newer save just replaced then fails instead of reading again.
package dynamostore
