# frozen_string_literal: true

require "erb"

module LeaseMachines
  class Web
    # The pages' HTML, from the ERB templates in views/ (compiled once, into one method each).
    class Views
      include HTML

      DIR = File.join(__dir__, "views")
      TEMPLATES = {
        index: "frame, listing",
        resource: "frame, status, mark, events, notice",
        confirm: "frame, status",
        message: "frame, text, link",
        layout: "frame, title, body"
      }.freeze
      private_constant :DIR, :TEMPLATES

      TEMPLATES.each do |name, arguments|
        path = File.join(DIR, "#{name}.erb")
        ERB.new(File.read(path, encoding: Encoding::UTF_8), trim_mode: "-").def_method(self, "#{name}(#{arguments})", path)
      end
    end
  end
end
