# frozen_string_literal: true

require "lease_machines"
require_relative "store_error"

module LeaseMachines
  # Durable authorities: one serialized, committed history per resource name,
  # shared by every process that opens the same database.
  #
  # Load an engine explicitly (the base gem needs neither sqlite3 nor pg):
  #
  #   require "lease_machines/stores/sqlite"    # LeaseMachines::Stores::SQLite
  #   require "lease_machines/stores/postgres"  # LeaseMachines::Stores::Postgres
  #
  # Every decision reads the resource's row, decides on it in Rust
  # ({Native.decide_row}), writes the new checkpoint only onto the row it
  # decided on (SQLite: inside one BEGIN IMMEDIATE transaction; PostgreSQL: a
  # compare-and-set UPDATE, or a locked transaction when a before_commit hook
  # is set), commits, and only then returns the {Decision}. See
  # docs/STORES.md.
  #
  # Time. A store's timeline is whole nanoseconds since the Unix epoch, in
  # 0..2**64-1 (until 2554). The core decides on that timeline exactly
  # ({Native.decide_row} hands it the nanoseconds as its "seconds", which the
  # core only adds and compares), so nothing is ever rounded between the row,
  # the core and the returned {Lease}.
  module Stores
    U64_MAX = (2**64) - 1
    # Resource names are 1..255 bytes of UTF-8 without NUL.
    NAME_MAX_BYTES = 255
    # The table every engine uses (found through the connection's search_path
    # on PostgreSQL).
    TABLE = "lease_machines_resources"
    NANOS_PER_SECOND = 1_000_000_000
    NANOS_PER_MILLISECOND = 1_000_000

    # Each engine loads its driver only when it is first used.
    autoload :SQLite, "lease_machines/stores/sqlite"
    autoload :Postgres, "lease_machines/stores/postgres"
    autoload :Schema, "lease_machines/stores/schema"
    autoload :CLI, "lease_machines/stores/cli"

    class << self
      # Validates a resource name and returns it as a frozen UTF-8 String.
      def resource_name(name)
        unless name.is_a?(String)
          raise TypeError, "name must be a String (the resource name), got #{name.inspect} (#{name.class})"
        end

        utf8 = utf8_name(name)
        raise ArgumentError, "name must not be empty, got #{name.inspect}" if utf8.empty?

        if utf8.bytesize > NAME_MAX_BYTES
          raise ArgumentError, "name must be at most #{NAME_MAX_BYTES} bytes, got #{utf8.bytesize} bytes: " \
                               "#{utf8[0, 40].inspect}..."
        end
        raise ArgumentError, "name must not contain NUL bytes, got #{name.inspect}" if utf8.include?("\0")

        -utf8
      end

      # A time argument in seconds (Integer or Float, as everywhere in the
      # gem) as exact Integer nanoseconds on a store's timeline.
      def nanos(value, name)
        ns = Native.nanos(value, name)
        return ns if ns <= U64_MAX

        raise ArgumentError, "#{name} is too large for a store (its timeline is whole nanoseconds in " \
                             "0..18446744073.709551615 seconds since the Unix epoch), got #{value.inspect}"
      end

      # The stored row's five columns (decimal text or nil; nil for a resource
      # with no row) as a {Checkpoint}; a StoreError naming the resource when
      # no history can produce them. The same check {Native.decide_row} makes.
      def checkpoint(name, columns)
        Native.stored_checkpoint(name, columns)
      end

      # A checkpoint's five columns as stored: decimal Strings (exact in every
      # engine) or nil.
      def columns(checkpoint)
        lease = checkpoint.lease
        [checkpoint.last_issued, lease&.owner, lease&.token, lease&.expires_at_ns, checkpoint.observed_ns]
          .map { |value| value&.to_s }
      end

      private

      def utf8_name(name)
        utf8 = name.encode(Encoding::UTF_8)
        return utf8 if utf8.valid_encoding?

        raise ArgumentError, "name must be valid UTF-8, got #{name.inspect}"
      rescue EncodingError
        raise ArgumentError, "name must be valid UTF-8, got #{name.inspect} (#{name.encoding})"
      end
    end

    # What a `before_commit` hook receives: called inside the transaction,
    # after the new checkpoint is written and before COMMIT. `decision` is the
    # Decision about to be returned (nil for an operator's force release),
    # `checkpoint` the state being committed, `connection` the engine's raw
    # connection (SQLite3::Database or PG::Connection) in that transaction.
    Commit = Struct.new(:store, :name, :decision, :checkpoint, :connection, keyword_init: true)

    # One resource's committed state, as an operator reads it. `clock_ns` is
    # the store clock at the time of reading; `updated_at` a Time (the store's
    # wall clock at the last write).
    Status = Struct.new(:name, :last_issued, :lease, :observed_ns, :updated_at, :clock_ns, keyword_init: true) do
      # @return [Checkpoint]
      def checkpoint
        Checkpoint.exact(last_issued: last_issued, lease: lease, observed_ns: observed_ns)
      end

      # @return [Boolean] whether a lease is held at the store's clock
      def held?
        !lease.nil? && lease.expires_at_ns > clock_ns
      end

      # @return [Float, nil] seconds until the lease expires (negative once it
      #   has), nil when there is no lease record
      def expires_in
        lease && ((lease.expires_at_ns - clock_ns) / 1e9)
      end
    end

    # What every engine shares: the decision transaction and the operator
    # calls. An engine provides #transaction (BEGIN, yield a transaction object
    # with #lock/#write/#connection, COMMIT), #read_status and #read_statuses.
    class Store
      # @return [#call, nil] the hook run before every COMMIT (see {Commit})
      attr_reader :before_commit

      def initialize(before_commit: nil)
        unless before_commit.nil? || before_commit.respond_to?(:call)
          raise TypeError, "before_commit must respond to #call, got #{before_commit.inspect}"
        end

        @before_commit = before_commit
      end

      # The durable authority for one resource. Cheap: every object for the
      # same name (from this store or any other on the same database) shares
      # one committed history.
      # @return [DurableAuthority]
      def authority(name)
        DurableAuthority.new(self, Stores.resource_name(name))
      end

      # One resource's committed state, or nil when it has no row.
      # @return [Status, nil]
      def status(name)
        read_status(Stores.resource_name(name))
      end

      # Every resource's committed state, ordered by name.
      # @return [Array<Status>]
      def statuses
        read_statuses
      end

      # Operator action: clears the lease record whoever holds it. The token
      # high-water mark stays, so the next grant gets a greater token and the
      # old holder is fenced at the resource. The observed clock advances to
      # the store clock (never back).
      # @return [Status, nil] the state before the release; nil when the
      #   resource has no row (nothing was written)
      def force_release(name)
        name = Stores.resource_name(name)
        transaction do |tx|
          columns, clock_ms = tx.lock(name, create: false)
          next nil unless columns

          before = Stores.checkpoint(name, columns)
          clock_ns = clock_ms * NANOS_PER_MILLISECOND
          after = Checkpoint.exact(last_issued: before.last_issued, lease: nil,
                                   observed_ns: [before.observed_ns, clock_ns].max)
          tx.write(name, Stores.columns(after), exists: true) unless after == before
          notify(tx, name, nil, Stores.columns(after))
          Status.new(name: name, last_issued: before.last_issued, lease: before.lease,
                     observed_ns: before.observed_ns, updated_at: nil, clock_ns: clock_ns).freeze
        end
      end

      # @api private: one decision in one transaction: lock the row, decide
      # in Rust ({Native.decide_row}: `kind` 0 acquire, 1 reacquire, 2 renew,
      # 3 release), write the row when it changed, run the hook, commit.
      def decide(name, now_ns, kind, owner, token, ttl_ns) # rubocop:disable Metrics/ParameterLists -- Native.decide_row's
        transaction do |tx|
          columns, clock_ms = tx.lock(name, create: true)
          decision, after = Native.decide_row(name, columns, kind, owner, token,
                                              now_ns || (clock_ms * NANOS_PER_MILLISECOND), ttl_ns)
          tx.write(name, after, exists: !columns.nil?) if after
          notify(tx, name, decision, after || columns)
          decision
        end
      end

      # @api private: the committed checkpoint of one resource (an empty one
      # when the resource has no row).
      def committed_checkpoint(name)
        status = read_status(name)
        return Stores.checkpoint(name, nil) unless status

        status.checkpoint
      end

      private

      # Runs the hook. `columns` is the row being committed (nil: a resource
      # with no row).
      def notify(transaction, name, decision, columns)
        return unless @before_commit

        @before_commit.call(Commit.new(store: self, name: name, decision: decision,
                                       checkpoint: Stores.checkpoint(name, columns),
                                       connection: transaction.connection))
      end

      def build_status(name, columns, updated_at, clock_ms)
        checkpoint = Stores.checkpoint(name, columns)
        Status.new(name: name, last_issued: checkpoint.last_issued, lease: checkpoint.lease,
                   observed_ns: checkpoint.observed_ns, updated_at: updated_at,
                   clock_ns: clock_ms * NANOS_PER_MILLISECOND).freeze
      end
    end

    # A durable authority for one resource: the same calls and keywords as
    # {LeaseMachines::Authority}, with `now:` optional (the store's clock by
    # default). Every call is one committed transaction; nothing is kept in
    # this object, so any number of them, in any number of processes, share
    # the resource's history. The clock policy is always `:clamp`.
    class DurableAuthority
      # The `kind` of {Native.decide_row}.
      ACQUIRE = 0
      REACQUIRE = 1
      RENEW = 2
      RELEASE = 3
      private_constant :ACQUIRE, :REACQUIRE, :RENEW, :RELEASE

      # @return [Store]
      attr_reader :store
      # @return [String] the resource name
      attr_reader :name

      # Use {Store#authority}.
      def initialize(store, name)
        @store = store
        @name = name
        freeze
      end

      # @return [Decision]
      def acquire(owner:, ttl:, now: nil)
        Authority.new.acquire(owner: owner, now: 0, ttl: 0) # validates owner as the core does
        @store.decide(@name, at(now), ACQUIRE, owner, nil, Stores.nanos(ttl, "ttl"))
      end

      # @return [Decision]
      def reacquire(owner:, ttl:, now: nil)
        Authority.new.reacquire(owner: owner, now: 0, ttl: 0)
        @store.decide(@name, at(now), REACQUIRE, owner, nil, Stores.nanos(ttl, "ttl"))
      end

      # @return [Decision]
      def renew(owner:, token:, ttl:, now: nil)
        Authority.new.renew(owner: owner, token: token, now: 0, ttl: 0)
        @store.decide(@name, at(now), RENEW, owner, token, Stores.nanos(ttl, "ttl"))
      end

      # @return [Decision]
      def release(owner:, token:, now: nil)
        Authority.new.release(owner: owner, token: token, now: 0)
        @store.decide(@name, at(now), RELEASE, owner, token, nil)
      end

      # The committed state (read without taking the row lock).
      # @return [Checkpoint]
      def checkpoint
        @store.committed_checkpoint(@name)
      end

      # @return [Symbol] always `:clamp`
      def clock_policy
        :clamp
      end

      def inspect
        "#<#{self.class.name} name=#{@name.inspect} store=#{@store.class.name}>"
      end
      alias to_s inspect

      private

      def at(now)
        now.nil? ? nil : Stores.nanos(now, "now")
      end
    end
  end
end
