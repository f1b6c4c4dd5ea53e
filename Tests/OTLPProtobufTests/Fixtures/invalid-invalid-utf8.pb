


	raw-scopebad Ã( text