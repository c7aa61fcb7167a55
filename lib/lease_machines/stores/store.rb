# frozen_string_literal: true

module LeaseMachines
  module Stores
    # What a `before_commit` hook receives, just before COMMIT (`decision` is nil for a force release).
    Commit = Struct.new(:store, :name, :decision, :checkpoint, :connection, keyword_init: true)

    # What every engine shares: the decision transaction and the operator calls. An engine provides
    # #transaction (its object: #lock, #write, #connection, maybe #lock_all), #read_status(es), #read_statuses_of, #read_names.
    class Store
      include BatchRenewal # renew_all
      include Reconciliation # reconcile

      # Seconds {#await_handover} waits before it looks where no release is announced (jittered).
      HANDOVER_POLL = 0.004

      # @return [#call, nil] the hook run before every COMMIT (see {Commit})
      attr_reader :before_commit

      # @return [Symbol] `:sequence` or `:clock_floor` (docs/STORES.md, "Durability and failover")
      attr_reader :tokens

      # @param durability [Symbol, nil] `:strict`: decide only where {Durability#strict?}, checked once per process
      def initialize(before_commit: nil, signing_keys: nil, tokens: :sequence, durability: nil)
        unless before_commit.nil? || before_commit.respond_to?(:call)
          raise TypeError, "before_commit must respond to #call, got #{before_commit.inspect}"
        end
        unless durability.nil? || durability == :strict
          raise ArgumentError, "durability must be :strict or nil, got #{durability.inspect}"
        end

        @before_commit = before_commit
        @signing_keys = Signing::Keys.from(signing_keys)
        @tokens = Native.token_policy(tokens)
        @strict_durability = durability == :strict
        @durable_in = nil
        @labelled = nil
      end

      # @api private: with `durability: :strict`, raises StoreError (nothing written) before the first
      # decision in a process whose database may lose an acknowledged grant.
      def ensure_durable
        return if !@strict_durability || @durable_in == Process.pid

        durability = self.durability
        unless durability.strict?
          raise StoreError, "#{durability.engine}: durability: :strict refuses to decide: #{durability.verdict}, " \
                            "#{durability.meaning} (#{durability.reasons.join('; ')}); nothing was written"
        end
        @durable_in = Process.pid
      end

      # The engine, its source (a URL without its password) and the options that change decisions.
      def inspect
        flags = [(" signed" if signs?), (" before_commit" if before_commit), (" tokens=#{@tokens}" if @tokens != :sequence),
                 (" durability=strict" if @strict_durability)].join
        "#<#{self.class.name} #{inspect_source}#{flags}>"
      end
      alias to_s inspect

      def signs? = !@signing_keys.nil?

      # @api private: the proof is computed after the commit (a before_commit hook sees none).
      def signed(name, decision) = @signing_keys ? @signing_keys.signed(name, decision) : decision
      def authority(name) = DurableAuthority.new(self, Stores.resource_name(name))

      # One resource's committed state, or nil when it has no row.
      def status(name) = read_status(Stores.resource_name(name))

      # Every resource's committed state, ordered by name; given `names`, only those that have a row.
      def statuses(names = nil)
        return read_statuses if names.nil?
        unless names.is_a?(Array) && names.all?(String)
          raise TypeError, "names must be an Array of Strings (resource names) or nil, got #{Stores.described(names)}"
        end

        names.empty? ? [] : read_statuses_of(names.uniq)
      end

      def names = read_names

      # Operator action: clears the lease whoever holds it; the token high-water mark stays (the old holder is fenced).
      # @return [Status, nil] the state before (its label only when the released lease's); nil: no row, nothing written
      def force_release(name)
        name = Stores.resource_name(name)
        labelled = labelled_for_reading?
        read = labelled ? read_status(name) : nil
        transaction do |tx|
          columns, clock_ms = tx.lock(name, create: false)
          next nil unless columns

          before = Native.row_checkpoint(name, columns)
          clock_ns = clock_ms * NANOS_PER_MILLISECOND
          after = Checkpoint.exact(last_issued: before.last_issued, lease: nil,
                                   observed_ns: [before.observed_ns, clock_ns].max)
          after_columns = Native.row_columns(after)
          tx.write(name, after_columns, exists: true, label: labelled ? nil : HolderLabel::KEEP) unless after == before
          announce_release(tx, name) if before.lease
          notify(tx, name, nil, after_columns)
          label = read.label if read&.lease && read.lease == before.lease
          Status.new(name: name, last_issued: before.last_issued, lease: before.lease,
                     observed_ns: before.observed_ns, updated_at: nil, clock_ns: clock_ns, label: label).freeze
        end
      end

      # Waits at most `seconds` for a release of `name` (or of any of several): true once one was seen.
      def await_handover(name, seconds)
        names = awaited_names(name)
        unless seconds.is_a?(Numeric) && seconds.real?
          raise TypeError, "seconds must be a real Numeric (seconds to wait), got #{Stores.described(seconds)}"
        end
        unless !seconds.negative? && seconds <= Float::MAX # compared exactly: 10**400.to_f warns
          raise ArgumentError, "seconds must be non-negative and finite, got #{seconds.inspect}"
        end

        handover_wait(names, seconds.to_f)
      end

      def decide(name, request, label = nil)
        label = stored_label(label)
        transaction { |tx| decided_in(tx, name, request, label) }
      end

      def committed_checkpoint(name) = read_status(name)&.checkpoint || Native.row_checkpoint(name, nil)

      # @api private: whether the table has the label's column, asked once (again after setup!): a table
      # made before the column existed keeps working, unlabelled.
      def labelled? = @labelled.nil? ? (@labelled = label_columns?) : @labelled

      def stored_label(label) = labelled? ? label : HolderLabel::UNSTORED

      private

      # {#labelled?} before a read: a server engine tells a failure to ask as a read's.
      def labelled_for_reading? = labelled?

      def schema_changed = (@labelled = nil)

      # A server engine's Failures::Driver hint: how to create the table, for the errors `missing_table` says lack it.
      def missing_table_hint(&missing_table)
        hint = "; create the table with store.setup! (or run #{self.class}::SCHEMA_SQL in a migration)"
        ->(error) { missing_table.call(error) ? hint : "" }
      end

      def within(deadline, &)
        deadline ? deadline.run(@failures, &) : yield
      end

      # Where no release is announced: one jittered sleep, then one read of each name (PostgreSQL LISTENs).
      def handover_wait(names, seconds)
        interval = HANDOVER_POLL * (1 + rand)
        sleep([interval, seconds].min) if seconds.positive?
        return false if seconds < interval

        names.any? do |name|
          status = read_status(name)
          status.nil? || !status.held?
        end
      end

      def awaited_names(name)
        return [Stores.resource_name(name)] unless name.is_a?(Array)
        raise ArgumentError, "name must be a resource name or a non-empty Array of them, got []" if name.empty?

        name.map { |each| Stores.resource_name(each) }.uniq
      end

      # One decision inside `transaction` (its own, or a batch's): lock, decide, write, hook.
      def decided_in(transaction, name, request, label)
        columns, clock_ms = transaction.lock(name, create: true)
        decision, after = request.decide(name, columns, clock_ms * NANOS_PER_MILLISECOND, @tokens)
        written = after && HolderLabel.written(request, decision, after, label)
        transaction.write(name, after, exists: !columns.nil?, label: written) if after
        announce_release(transaction, name) if after && decision.released?
        notify(transaction, name, decision, after || columns)
        decision
      end

      # In the release's own transaction (PostgreSQL's NOTIFY); elsewhere waiters poll.
      def announce_release(transaction, name)
        transaction.announce_release(name) if transaction.respond_to?(:announce_release)
      end

      def notify(transaction, name, decision, columns)
        return unless @before_commit

        @before_commit.call(Commit.new(store: self, name: name, decision: decision,
                                       checkpoint: Native.row_checkpoint(name, columns),
                                       connection: transaction.connection))
      end

      # A row the block cannot read does not hide the others ({UnreadableStatusesError}).
      def readable_statuses(rows, name_at:)
        failures = {}
        statuses = rows.filter_map do |row|
          yield row
        rescue StoreError => e
          failures[row.fetch(name_at)] = e
          nil
        end
        raise UnreadableStatusesError.new(statuses, failures) unless failures.empty?

        statuses
      end

      def build_status(name, columns, updated_at, clock_ms, label = nil)
        checkpoint = Native.row_checkpoint(name, columns)
        Status.new(name: name, last_issued: checkpoint.last_issued, lease: checkpoint.lease,
                   observed_ns: checkpoint.observed_ns, updated_at: updated_at,
                   clock_ns: clock_ms * NANOS_PER_MILLISECOND, label: HolderLabel.read(label)).freeze
      end
    end
  end
end
