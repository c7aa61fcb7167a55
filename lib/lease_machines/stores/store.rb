# frozen_string_literal: true

module LeaseMachines
  module Stores
    # What every engine shares: the decision transaction and the operator
    # calls. An engine provides #transaction (BEGIN, yield a transaction object
    # with #lock/#write/#connection, and #lock_all where the engine locks
    # several rows in one statement; COMMIT), #read_status, #read_statuses,
    # #read_statuses_of and #read_names.
    class Store
      include BatchRenewal # renew_all
      include Reconciliation # reconcile

      # Seconds {#await_handover} waits before it looks, on an engine that
      # cannot be told of a release (jittered by up to the same again).
      HANDOVER_POLL = 0.004

      # @return [#call, nil] the hook run before every COMMIT (see {Commit})
      attr_reader :before_commit

      # @return [Symbol] how a grant's token is chosen: `:sequence` (the last
      #   token issued plus one) or `:clock_floor` (also at least the store
      #   clock in microseconds; docs/STORES.md, "Durability and failover")
      attr_reader :tokens

      # @param signing_keys [Array<String>, nil] see {Signing::Keys.from}
      # @param tokens [Symbol] `:sequence` (default) or `:clock_floor`
      # @param durability [Symbol, nil] `:strict`: decide only on a database
      #   whose settings keep every grant it acknowledged through a failover
      #   ({Durability#strict?}), checked before the first decision in each
      #   process; nil (the default): no check
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

      # @api private: with `durability: :strict`, raises StoreError (nothing
      # written) before the first decision in a process when the database may
      # lose a grant it acknowledged; the check is made once per process.
      def ensure_durable
        return if !@strict_durability || @durable_in == Process.pid

        durability = self.durability
        unless durability.strict?
          raise StoreError, "#{durability.engine}: durability: :strict refuses to decide: #{durability.verdict}, " \
                            "#{durability.meaning} (#{durability.reasons.join('; ')}); nothing was written"
        end
        @durable_in = Process.pid
      end

      # A short description: the engine, where its connections come from
      # (a URL without its password), and the options that change decisions.
      def inspect
        flags = [(" signed" if signs?), (" before_commit" if before_commit), (" tokens=#{@tokens}" if @tokens != :sequence),
                 (" durability=strict" if @strict_durability)].join
        "#<#{self.class.name} #{inspect_source}#{flags}>"
      end
      alias to_s inspect

      # Whether granted and renewed leases carry a proof of their token
      # (`signing_keys:` given).
      def signs?
        !@signing_keys.nil?
      end

      # @api private: with `signing_keys:`, the lease carries its token's
      # proof, computed after the commit (a before_commit hook sees none).
      def signed(name, decision)
        @signing_keys ? @signing_keys.signed(name, decision) : decision
      end

      # The durable authority for one resource (cheap: they share the row).
      # @return [DurableAuthority]
      def authority(name)
        DurableAuthority.new(self, Stores.resource_name(name))
      end

      # One resource's committed state, or nil when it has no row.
      # @return [Status, nil]
      def status(name)
        read_status(Stores.resource_name(name))
      end

      # Every resource's committed state, ordered by name; given `names`,
      # only those resources' that have a row (one query: a page of a list).
      # @param names [Array<String>, nil] names as {#names} reads them
      # @return [Array<Status>]
      def statuses(names = nil)
        return read_statuses if names.nil?
        unless names.is_a?(Array) && names.all?(String)
          raise TypeError, "names must be an Array of Strings (resource names) or nil, got #{Stores.described(names)}"
        end

        names.empty? ? [] : read_statuses_of(names.uniq)
      end

      # Every resource's name, ordered as {#statuses} orders them: one
      # column, what a list pages over before it reads one page's statuses.
      # @return [Array<String>]
      def names
        read_names
      end

      # Operator action: clears the lease whoever holds it. The token
      # high-water mark stays, so the old holder is fenced at the resource.
      # @return [Status, nil] the state before the release (its label read
      #   just before the transaction, given only when it is the released
      #   lease's); nil when the resource has no row (nothing was written)
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

      # Waits at most `seconds` for a release (or force release) of `name`:
      # true as soon as one was seen, false when nothing was (try again now).
      # @param name [String, Array<String>] a resource, or several (a
      #   release of any of them ends the wait: the slots of a `limit:`)
      # @param seconds [Numeric] non-negative and finite
      # @return [Boolean]
      def await_handover(name, seconds)
        names = awaited_names(name)
        unless seconds.is_a?(Numeric) && seconds.real?
          raise TypeError, "seconds must be a real Numeric (seconds to wait), got #{Stores.described(seconds)}"
        end
        unless !seconds.negative? && seconds.to_f.finite?
          raise ArgumentError, "seconds must be non-negative and finite, got #{seconds.inspect}"
        end

        handover_wait(names, seconds.to_f)
      end

      # @api private: one decision in one transaction: lock, decide, write, hook, commit.
      # @param request [Native::Request]
      # @param label [String, nil] the holder's label ({HolderLabel}), written with a grant
      def decide(name, request, label = nil)
        label = stored_label(label)
        transaction { |tx| decided_in(tx, name, request, label) }
      end

      # @api private: the committed checkpoint of one resource (an empty one
      # when the resource has no row).
      def committed_checkpoint(name)
        status = read_status(name)
        return Native.row_checkpoint(name, nil) unless status

        status.checkpoint
      end

      # @api private: whether the table has the label's column: asked once
      # (again after {#setup!}), never while the table is missing. A table
      # made before the column existed keeps working, unlabelled.
      def labelled?
        return @labelled unless @labelled.nil?

        @labelled = label_columns?
      end

      # @api private: `label`, or {HolderLabel::UNSTORED} when the table has
      # no column for it.
      def stored_label(label)
        labelled? ? label : HolderLabel::UNSTORED
      end

      private

      # {#labelled?} before a read: a server engine tells a failure to ask as a read's.
      def labelled_for_reading?
        labelled?
      end

      # After setup! (which adds the label's column), {#labelled?} asks again.
      def schema_changed
        @labelled = nil
      end

      # Runs a decision within a server store's `timeout:` ({Deadline}), if it has one.
      def within(deadline, &)
        deadline ? deadline.run(@failures, &) : yield
      end

      # On an engine that cannot be told of a release: one jittered sleep,
      # then one read of each name. PostgreSQL overrides it (LISTEN).
      def handover_wait(names, seconds)
        interval = HANDOVER_POLL * (1 + rand)
        sleep([interval, seconds].min) if seconds.positive?
        return false if seconds < interval

        names.any? do |name|
          status = read_status(name)
          status.nil? || !status.held?
        end
      end

      # {#await_handover}'s names, each checked: a non-empty Array of them, or one.
      def awaited_names(name)
        return [Stores.resource_name(name)] unless name.is_a?(Array)
        raise ArgumentError, "name must be a resource name or a non-empty Array of them, got []" if name.empty?

        name.map { |each| Stores.resource_name(each) }.uniq
      end

      # One decision inside `transaction` (a decision's own, or a batch's:
      # {BatchRenewal}): lock, decide, write, hook. `label`: {#stored_label}'s.
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

      # Runs the hook. `columns` is the row being committed (nil: a resource
      # with no row).
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

      # `label`: the stored label's value as read (nil without the column).
      def build_status(name, columns, updated_at, clock_ms, label = nil)
        checkpoint = Native.row_checkpoint(name, columns)
        Status.new(name: name, last_issued: checkpoint.last_issued, lease: checkpoint.lease,
                   observed_ns: checkpoint.observed_ns, updated_at: updated_at,
                   clock_ns: clock_ms * NANOS_PER_MILLISECOND, label: HolderLabel.read(label)).freeze
      end
    end
  end
end
