# frozen_string_literal: true

require "active_job"
require "lease_machines"
require_relative "jobs"
require_relative "active_job/leased_job"

module LeaseMachines
  # ActiveJob jobs that hold a lease while they run, on any queue adapter
  # (docs/JOBS.md):
  #
  #   class NightlyReportJob < ApplicationJob
  #     include LeaseMachines::ActiveJob
  #     leased resource: ->(job) { "report/#{job.arguments.first}" }, ttl: 30, on_occupied: :retry
  #
  #     def perform(day) = Report.for(day).fenced_update!(lease.token, body: build(day))
  #   end
  #
  # Built on ActiveJob's public API only (around_perform, retry_job), so
  # Rails 6.1 to 8 behave alike.
  module ActiveJob
    def self.included(job_class)
      job_class.include(LeasedJob)
    end
  end
end
