# frozen_string_literal: true

module LeaseMachines
  class Web
    # The index's list: names filtered by a name or a glob, then one page, whose statuses alone are read.
    class Listing
      attr_reader :filter, :page, :pages, :total, :statuses, :matched, :failures

      def initialize(names, filter:, page:, per_page:)
        @filter = filter.to_s
        matcher = matcher(@filter)
        @total = names.size
        kept = matcher ? names.select(&matcher) : names
        @matched = kept.size
        @pages = [(kept.size + per_page - 1) / per_page, 1].max
        @page = Integer(page.to_s, 10, exception: false)&.clamp(1, @pages) || 1
        @statuses, @failures = yield(kept[(@page - 1) * per_page, per_page] || [])
      end

      private

      def matcher(filter)
        return nil if filter.empty?
        return NamePattern.new(filter).method(:match?) if NamePattern.glob?(filter)

        ->(name) { name.include?(filter) }
      end
    end
  end
end
