# frozen_string_literal: true

module LeaseMachines
  module Sidekiq
    # `on_enqueue: :skip_if_held` at a job's first push (the middleware returns nil: Sidekiq's way of stopping one).
    class ClientMiddleware
      include ::Sidekiq::ClientMiddleware if defined?(::Sidekiq::ClientMiddleware)

      RESCHEDULES = "lease_reschedules"

      def call(job_class, payload, _queue, _redis_pool)
        option = checked_option(job_class)
        return yield if option.nil? || option.on_enqueue.nil? || payload.key?(RESCHEDULES)

        resource = option.resource_for(payload["args"])
        tags = { job: payload["class"].to_s, jid: payload["jid"].to_s }
        Jobs::EnqueueCheck.skip?(option, resource, tags: tags) ? nil : yield
      end

      private

      def checked_option(job_class)
        job_class = loaded(job_class) if job_class.is_a?(String)
        job_class.is_a?(Module) ? Sidekiq.lease_option(job_class) : nil
      end

      def loaded(name)
        Object.const_get(name)
      rescue NameError
        nil
      end
    end
  end
end
