# frozen_string_literal: true

module LeaseMachines
  module Sidekiq
    # `on_enqueue: :skip_if_held` (docs/JOBS.md): a job pushed while its
    # lease is held is not enqueued (the middleware returns nil: Sidekiq's
    # way of stopping a push; `perform_async` returns nil). Only a job's first
    # push is checked: a job the server middleware reschedules has been
    # enqueued once, and Sidekiq's retries do not pass the client chain.
    class ClientMiddleware
      include ::Sidekiq::ClientMiddleware if defined?(::Sidekiq::ClientMiddleware)

      # The payload key counting a job's reschedules ({ServerMiddleware}).
      RESCHEDULES = "lease_reschedules"

      def call(job_class, payload, _queue, _redis_pool)
        option = checked_option(job_class)
        return yield if option.nil? || option.on_enqueue.nil? || payload.key?(RESCHEDULES)

        resource = option.resource_for(payload["args"])
        tags = { job: payload["class"].to_s, jid: payload["jid"].to_s }
        Jobs::EnqueueCheck.skip?(option, resource, tags: tags) ? nil : yield
      end

      private

      # Sidekiq gives the class, or its name (a job pushed by name, e.g.
      # from another app): a name not loaded here has no declaration here.
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
