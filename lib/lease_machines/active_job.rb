# frozen_string_literal: true

require "active_job"
require "lease_machines"
require_relative "jobs"
require_relative "active_job/leased_job"

module LeaseMachines
  # ActiveJob jobs that hold a lease while they run (docs/JOBS.md). Public
  # API only (around_perform, retry_job), so Rails 6.1 to 8 behave alike.
  module ActiveJob
    def self.included(job_class) = job_class.include(LeasedJob)
  end
end
