"""The Textual layer: screens, widgets and the stylesheet. All logic lives in ntui.core."""
