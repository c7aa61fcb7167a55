# frozen_string_literal: true

module LeaseMachines
  module Sidekiq
    # Holds a job's lease around `perform` and does what `on_conflict` says when it is held. On Sidekiq::Shutdown
    # the lease is released as for any exception; the token fences the old thread if it writes anyway.
    class ServerMiddleware
      include ::Sidekiq::ServerMiddleware if defined?(::Sidekiq::ServerMiddleware)

      FORGOTTEN_ON_RESCHEDULE = %w[enqueued_at error_message error_class failed_at retry_count].freeze
      def logger = ::Sidekiq.logger

      def call(job, payload, _queue, &)
        option = Sidekiq.lease_option(job.class)
        return yield if option.nil?

        resource = option.resource_for(payload["args"])
        tags = { job: job.class.name.to_s, jid: payload["jid"].to_s }
        outcome = Jobs::LeasedRun.call(option, resource, tags: tags) do |held|
          job.lease = held if job.respond_to?(:lease=)
          yield
        end
        return outcome.value if outcome.held?

        occupied(option, job, payload, resource, outcome.decision)
      end

      private

      def occupied(option, job, payload, resource, decision)
        case option.on_conflict
        when :discard
          logger.info("lease_machines: skipped #{job.class} #{payload['jid']}: #{resource} is held (#{decision.reason})")
          nil
        when :reschedule then reschedule(option, payload, resource)
        else raise Occupied.new(resource: resource, decision: decision)
        end
      end

      def reschedule(option, payload, resource)
        delay = option.reschedule_in * (1 + (rand / 5))
        again = payload.except(*FORGOTTEN_ON_RESCHEDULE)
        again["at"] = Time.now.to_f + delay
        again[ClientMiddleware::RESCHEDULES] = payload.fetch(ClientMiddleware::RESCHEDULES, 0) + 1
        ::Sidekiq::Client.push(again)
        logger.info("lease_machines: rescheduled #{payload['class']} #{payload['jid']} in #{delay.round(2)}s: " \
                    "#{resource} is held")
        nil
      end
    end
  end
end
