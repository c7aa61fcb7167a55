# frozen_string_literal: true

module LeaseMachines
  # What the job integrations share: a job's lease declaration, and running a job under its lease.
  module Jobs
    # A job's lease declaration (docs/JOBS.md), checked once when the job class declares it.
    class LeaseOption
      KEYS = %i[resource ttl wait on_conflict on_occupied on_enqueue store reschedule_in limit max_hold].freeze
      ON_CONFLICT = %i[reschedule discard raise].freeze
      ON_ENQUEUE = [nil, :skip_if_held].freeze

      attr_reader :on_conflict, :on_enqueue, :reschedule_in, :max_hold, :wait, :limit

      def initialize(options, aliases:, owner:)
        unless options.is_a?(Hash)
          raise TypeError, "#{owner} must be a Hash (resource:, ttl:, on_conflict:), got #{Stores.described(options)}"
        end

        @owner = owner
        options = options.transform_keys(&:to_sym)
        refuse_unknown(options)
        @resource = checked_resource(options.fetch(:resource) { raise ArgumentError, "#{owner} needs resource:" })
        check_spans(options)
        @on_conflict = checked_on_conflict(options, aliases)
        @on_enqueue = checked_choice(options[:on_enqueue], ON_ENQUEUE, "on_enqueue")
        @limit = Runtime::Slots.check(options.fetch(:limit, 1), argument: "#{owner} limit")
        @store = options[:store]
        freeze
      end

      alias on_occupied on_conflict

      def resource_for(subject)
        name = @resource.respond_to?(:call) ? @resource.call(subject) : @resource
        Stores.resource_name(name, argument: "#{@owner} resource")
      end

      def ttl = @ttl || LeaseMachines.configuration.default_ttl

      def store
        return LeaseMachines.configuration.store if @store.nil?

        @store.respond_to?(:authority) ? @store : @store.call
      end

      private

      def check_spans(options)
        @ttl = checked_seconds(options[:ttl], "ttl", positive: nil) do |ttl|
          Cadence.new(ttl: ttl, renew_after: ttl, warn_before: 0)
        end
        @wait = checked_seconds(options.fetch(:wait, 0), "wait")
        @reschedule_in = checked_seconds(options.fetch(:reschedule_in, 5), "reschedule_in")
        @max_hold = checked_seconds(options[:max_hold], "max_hold", positive: true) do |value|
          Cadence.new(ttl: @ttl, renew_after: @ttl, warn_before: 0, max_hold: value) if @ttl
        end
      end

      def refuse_unknown(options)
        unknown = options.except(*KEYS)
        return if unknown.empty?

        shown = unknown.map { |key, value| "#{key}: #{Stores.described(value)}" }.join(", ")
        raise ArgumentError, "#{@owner} has unknown keys (#{shown}); known: #{KEYS.inspect}"
      end

      def checked_resource(resource)
        return resource if resource.respond_to?(:call)

        Stores.resource_name(resource, argument: "#{@owner} resource")
      end

      # Seconds as `hold` checks them, then by the block; `positive: nil`: by the block alone (ttl:, by its Cadence).
      def checked_seconds(value, name, positive: false)
        return nil if value.nil?

        value = Runtime::Seconds.plain(value)
        Runtime::Seconds.check(name, value, positive: positive) unless positive.nil?
        yield value if block_given?
        value
      rescue TypeError, RangeError, ArgumentError => e
        raise e.class, "#{@owner} #{name} must be seconds, got #{Stores.described(value)}: #{e.message}"
      end

      def checked_on_conflict(options, aliases)
        if options.key?(:on_conflict) && options.key?(:on_occupied)
          raise ArgumentError, "#{@owner} has both on_conflict: #{Stores.described(options[:on_conflict])} and " \
                               "on_occupied: #{Stores.described(options[:on_occupied])}; on_occupied is the older " \
                               "name of on_conflict: give one"
        end
        name = options.key?(:on_occupied) ? "on_occupied" : "on_conflict"
        choice = options.fetch(:on_conflict) { options.fetch(:on_occupied, :reschedule) }
        choice = checked_choice(choice, ON_CONFLICT + aliases.keys, name)
        aliases.fetch(choice, choice)
      end

      def checked_choice(choice, choices, name)
        choice = choice.to_sym if choice.is_a?(String)
        return choice if choices.include?(choice)

        raise ArgumentError, "#{@owner} #{name} must be one of #{choices.inspect}, got #{Stores.described(choice)}"
      end
    end

    # Where a job class keeps its lease declaration (ActiveJob's `leased`, Sidekiq's `sidekiq_options lease:`).
    module Declaration
      def lease_machines_option
        return @lease_machines_option if instance_variable_defined?(:@lease_machines_option)

        superclass.respond_to?(:lease_machines_option) ? superclass.lease_machines_option : nil
      end
    end
  end
end
